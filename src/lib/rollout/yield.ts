/**
 * Resolves after the event loop has had a turn: pending messages (weight announces, heartbeats,
 * comlink calls) are handled before the caller goes on. A long chain of awaits on microtasks
 * (a decode step, a sandbox run) never lets them in otherwise. Uses a MessageChannel, which is
 * not clamped the way nested `setTimeout(0)` is (4 ms).
 */
let channel: MessageChannel | undefined;
const waiting: (() => void)[] = [];

export function yieldToEventLoop(): Promise<void> {
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()?.();
    // Node keeps a process alive while a port is referenced; browsers ignore this.
    (channel.port1 as { unref?: () => void }).unref?.();
  }
  const c = channel;
  return new Promise((resolve) => {
    waiting.push(resolve);
    c.port2.postMessage(null);
  });
}
