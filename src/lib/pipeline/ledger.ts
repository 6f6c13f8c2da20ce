/**
 * Every episode of a session by its seq (its key in the store): written by a rollout, trained,
 * dropped as too stale, or pushed out of a full buffer. Counters alone balance in sum, so an
 * episode stored twice could hide one lost; the ledger accounts for each by id.
 */
export class SeqLedger {
  readonly written = new Set<number>();
  readonly trained = new Set<number>();
  readonly staleDropped = new Set<number>();
  readonly overflowed = new Set<number>();

  /** A plain copy, sorted (what a test or the chaos bench reads from the page). */
  view(): LedgerView {
    const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);
    return {
      written: sorted(this.written),
      trained: sorted(this.trained),
      staleDropped: sorted(this.staleDropped),
      overflowed: sorted(this.overflowed),
    };
  }
}

export interface LedgerView {
  written: number[];
  trained: number[];
  staleDropped: number[];
  overflowed: number[];
}

/** Where every episode of a stopped session went, by seq, against what the store holds. */
export interface LedgerAccount {
  /** Written and neither trained, dropped, pushed out, nor waiting unconsumed in the store. */
  lost: number[];
  /** In the store but never written by the session (an episode the pipeline does not know of). */
  orphans: number[];
  /** Written and waiting unconsumed in the store (a resume trains them). */
  waiting: number[];
}

/**
 * Accounts for each written episode: trained, stale-dropped, pushed out, or waiting among the
 * store's `unconsumed`; the rest are lost. Stored seqs (`stored`: all the store holds, consumed
 * ones included) the session never wrote are orphans.
 */
export function account(
  ledger: LedgerView,
  stored: readonly number[],
  unconsumed: readonly number[],
): LedgerAccount {
  const settled = new Set([...ledger.trained, ...ledger.staleDropped, ...ledger.overflowed]);
  const open = new Set(unconsumed);
  const written = new Set(ledger.written);
  return {
    lost: ledger.written.filter((s) => !settled.has(s) && !open.has(s)),
    orphans: [...new Set(stored)].filter((s) => !written.has(s)).sort((a, b) => a - b),
    waiting: ledger.written.filter((s) => !settled.has(s) && open.has(s)),
  };
}
