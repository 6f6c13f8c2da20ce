import { describe, expect, it } from 'vitest';
import type { Finding } from '../stats/doctor';
import { evidenceText, stripSummary, worstSeverity } from './doctor-notices';

const finding = (over: Partial<Finding>): Finding => ({
  id: 'stagnant',
  severity: 'warning',
  version: 120,
  title: 'Learning has stalled',
  evidence: [],
  meaning: '',
  advice: '',
  ...over,
});

describe('the doctor’s notice strip', () => {
  it('names the first finding with its version, and counts the rest', () => {
    expect(stripSummary([])).toBe('');
    expect(stripSummary([finding({})])).toBe('⚠ Learning has stalled (version 120)');
    const two = [
      finding({ id: 'non-finite', severity: 'critical', title: 'A step was not finite', version: 9 }),
      finding({}),
    ];
    expect(stripSummary(two)).toBe('⛔ A step was not finite (version 9) · 1 more');
  });

  it('takes the colour of the most serious finding standing', () => {
    expect(worstSeverity([])).toBeNull();
    expect(worstSeverity([finding({ severity: 'info' }), finding({})])).toBe('warning');
    expect(worstSeverity([finding({}), finding({ severity: 'critical' })])).toBe('critical');
  });

  it('writes the evidence as name and value pairs', () => {
    const evidence = [
      { name: 'entropy now', value: 0.05 },
      { name: 'ratio', value: Infinity },
    ];
    expect(evidenceText({ evidence })).toBe('entropy now 0.05 · ratio Infinity');
  });
});
