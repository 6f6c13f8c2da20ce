import { describe, expect, it } from 'vitest';
import { account, SeqLedger } from './ledger';

describe('account', () => {
  it('finds the lost and the orphaned episode by id, which a balance of counts would net out', () => {
    const l = new SeqLedger();
    for (const s of [0, 1, 2, 3, 4, 5]) l.written.add(s);
    for (const s of [0, 1]) l.trained.add(s);
    l.staleDropped.add(2);
    l.overflowed.add(3);
    // Seq 5 waits unconsumed; seq 4 vanished; seq 9 is stored though never written.
    const a = account(l.view(), [0, 1, 5, 9], [5, 9]);
    expect(a).toEqual({ lost: [4], orphans: [9], waiting: [5] });
    // The counts balance: 6 written = 2 trained + 1 dropped + 1 pushed out + 2 unconsumed.
    expect(l.written.size).toBe(l.trained.size + l.staleDropped.size + l.overflowed.size + 2);
  });

  it('a clean session has nothing lost and no orphan', () => {
    const l = new SeqLedger();
    for (const s of [0, 1, 2]) l.written.add(s);
    l.trained.add(0);
    l.trained.add(1);
    expect(account(l.view(), [0, 1, 2], [2])).toEqual({ lost: [], orphans: [], waiting: [2] });
  });
});
