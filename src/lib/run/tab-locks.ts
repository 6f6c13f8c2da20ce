/**
 * Web Locks that keep two tabs of the page from training one stored run: the tab that trains a
 * run holds its lock, and the others see the lock held ("in another tab"). Best effort: where
 * the browser has no Web Locks, or a request fails, nothing is refused and nothing shows held.
 */
export class TabLocks {
  /** Names of the locks this page holds now (its own runs are not "elsewhere"). */
  private own: readonly string[] = [];
  /** Where this page says that it took or let go of a lock, and hears the other tabs say so. */
  private readonly news: BroadcastChannel | null;

  /**
   * `channel`: the name of a BroadcastChannel on which the tabs announce their locks' changes
   * (`onElsewhereChange`): a tab's list of runs goes stale otherwise, "training in another tab"
   * long after that tab stopped. None: no news.
   */
  constructor(channel?: string) {
    this.news = channel && typeof BroadcastChannel !== 'undefined' ? new BroadcastChannel(channel) : null;
  }

  /** Calls `listener` whenever another tab takes or lets go of one of these locks. */
  onElsewhereChange(listener: () => void): void {
    if (this.news) this.news.onmessage = () => listener();
  }

  /**
   * Takes the lock `name` until `until` settles; false when another tab holds it (the lock is
   * not waited for).
   */
  hold(name: string, until: Promise<unknown>): Promise<boolean> {
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
    if (!locks) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      let held = false;
      locks
        .request(name, { ifAvailable: true }, (lock) => {
          resolve(lock !== null);
          if (!lock) return undefined;
          held = true;
          this.own = [...this.own, name];
          this.news?.postMessage(name);
          return until.catch(() => undefined);
        })
        .catch(() => resolve(true))
        // Once the browser has let the lock go: a query before that still lists it as held.
        .finally(() => {
          if (!held) return;
          this.own = this.own.filter((n) => n !== name);
          this.news?.postMessage(name);
        });
    });
  }

  /** Names of the locks held now by other tabs (or other pages of this origin). */
  async heldElsewhere(): Promise<string[]> {
    const locks = typeof navigator === 'undefined' ? undefined : navigator.locks;
    const held = (await locks?.query().catch(() => undefined))?.held ?? [];
    return held.flatMap((l) => (l.name && !this.own.includes(l.name) ? [l.name] : []));
  }
}
