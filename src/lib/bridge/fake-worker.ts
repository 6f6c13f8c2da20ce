import * as Comlink from 'comlink';
import type { WorkerLike } from './worker-bridge';

/**
 * A worker for unit tests of bridges: `api` is exposed with comlink on one end of a
 * `MessageChannel`, the bridge talks to the other end, and the test makes the worker crash or
 * fail to answer by hand.
 */
export class FakeWorker implements WorkerLike {
  terminated = false;
  private readonly channel = new MessageChannel();
  /** Listeners of the worker's own events (`error`, `messageerror`). */
  private readonly events = new EventTarget();

  constructor(api: object) {
    Comlink.expose(api, this.channel.port2);
  }

  postMessage(message: unknown, transfer: Transferable[] = []): void {
    if (!this.terminated) this.channel.port1.postMessage(message, transfer);
  }

  addEventListener(type: string, listener: EventListenerOrEventListenerObject): void {
    if (type === 'message') this.channel.port1.addEventListener(type, listener);
    else this.events.addEventListener(type, listener);
  }

  removeEventListener(type: string, listener: EventListenerOrEventListenerObject): void {
    if (type === 'message') this.channel.port1.removeEventListener(type, listener);
    else this.events.removeEventListener(type, listener);
  }

  start(): void {
    this.channel.port1.start();
  }

  terminate(): void {
    this.terminated = true;
    this.channel.port1.close();
    this.channel.port2.close();
  }

  /** Fires the `error` event a worker's uncaught error fires (`message` empty: a failed load). */
  crash(message: string): void {
    this.events.dispatchEvent(Object.assign(new Event('error'), { message }));
  }

  /** Fires the event of a message the page could not read. */
  unreadable(): void {
    this.events.dispatchEvent(new Event('messageerror'));
  }
}

/** A promise and the functions that settle it, for fake APIs whose answers a test holds back. */
export function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
