import { describe, expect, it } from 'vitest';
import { DEFAULT_POOL } from './worker-pool-types';

describe('DEFAULT_POOL', () => {
  it('detects a hang within 850 ms while timers run, and bounds the adapted bound', () => {
    const p = DEFAULT_POOL;
    expect(p.hangMs + 2 * p.heartbeatMs).toBeLessThanOrEqual(850);
    expect(p.maxHangMs).toBeGreaterThanOrEqual(p.hangMs);
    expect(p.blockedMs).toBeGreaterThan(p.maxHangMs);
    expect(p.pingMs).toBeGreaterThanOrEqual(p.heartbeatMs);
  });
});
