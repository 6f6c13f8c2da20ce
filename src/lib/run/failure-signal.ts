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

/**
 * Resolves true once `p` settles (either way), or false after `ms`: how long to wait on a worker
 * that may never answer. The wait's timer is cleared either way.
 */
export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([
    p.then(
      () => true as const,
      () => true as const,
    ),
    late,
  ]);
  clearTimeout(timer);
  return settled;
}
