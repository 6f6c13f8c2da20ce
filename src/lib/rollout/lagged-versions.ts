/**
 * The versions a rollout worker holds for a fixed lag (`RunConfig.playLag`): with version v
 * announced, it plays the weights of version max(0, v − lag). Holds the last lag + 1 versions
 * it was given; when one never came (a store read skipped it), the oldest held after it stands
 * in, so a batch is never more than `lag` versions old.
 */
export class LaggedVersions<T> {
  private held: { version: number; item: T }[] = [];

  constructor(readonly lag: number) {
    if (!(Number.isInteger(lag) && lag >= 0)) throw new Error(`a lag must be an integer ≥ 0, got ${lag}`);
  }

  /** Takes version `version`; returns the one to play now. Items no longer needed go to `drop`. */
  push(version: number, item: T, drop: (item: T) => void = () => undefined): { version: number; item: T } {
    const newest = this.held.at(-1);
    if (newest && version < newest.version)
      throw new Error(`version ${version} came after ${newest.version}`);
    // The same version again (its first offer failed downstream): the new copy replaces it.
    if (newest?.version === version) drop((this.held.pop() as { item: T }).item);
    this.held.push({ version, item });
    const want = Math.max(0, version - this.lag);
    // `want` itself; where it never came, the oldest held after it (a gap: less lag, never more).
    const at = this.held.findIndex((h) => h.version >= want);
    for (const gone of this.held.splice(0, at)) drop(gone.item);
    return this.held[0] as { version: number; item: T };
  }

  /** Everything held, for disposal. */
  clear(drop: (item: T) => void = () => undefined): void {
    for (const h of this.held.splice(0)) drop(h.item);
  }
}
