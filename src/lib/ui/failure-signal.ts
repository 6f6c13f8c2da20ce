/**
 * A promise that rejects when told to, and counts as handled until something races it. A
 * crashed worker never answers the calls waiting on it: those calls race its failure signal.
 */
export function failureSignal(): { promise: Promise<never>; reject: (err: Error) => void } {
  let reject: (err: Error) => void = () => undefined;
  const promise = new Promise<never>((_, fail) => (reject = fail));
  promise.catch(() => undefined);
  return { promise, reject };
}
