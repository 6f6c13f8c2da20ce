import { describe, expect, it } from 'vitest';
import type { Finding } from '../stats/doctor';
import { evidenceText, spellsShown, spellText, stripSummary, worstSeverity } from './doctor-notices';

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

describe('the doctor’s list in the Figures view', () => {
  const spell = (firedAt: number, withdrawnAt: number | null) => ({
    id: 'stagnant' as const,
    firedAt,
    withdrawnAt,
    finding: finding({ version: firedAt }),
  });

  it('says when each finding stood', () => {
    expect(spellText(spell(110, null))).toBe('since version 110');
    expect(spellText(spell(110, 154))).toBe('version 110 to 154');
  });

  it('lists standing findings first, each part newest first', () => {
    const shown = spellsShown([spell(10, 20), spell(30, null), spell(40, 50), spell(60, null)]);
    expect(shown.map((r) => r.firedAt)).toEqual([60, 30, 40, 10]);
  });
});
