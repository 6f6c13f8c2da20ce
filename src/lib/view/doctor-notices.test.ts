import { describe, expect, it } from 'vitest';
import type { Finding } from '../stats/doctor';
import {
  doctorMarks,
  evidenceText,
  spellsShown,
  spellText,
  stripSummary,
  timedMarks,
  worstSeverity,
} from './doctor-notices';

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

describe('the doctor’s marks on the charts', () => {
  const spell = (f: Finding, firedAt: number, withdrawnAt: number | null = null) => ({
    id: f.id,
    firedAt,
    withdrawnAt,
    finding: f,
  });
  const history = [
    spell(finding({ id: 'stagnant', version: 260 }), 200, 240),
    spell(finding({ id: 'saturated', severity: 'info', title: 'The level is too easy', version: 150 }), 150),
    spell(finding({ id: 'stagnant', version: 300 }), 280),
  ];

  it('puts one mark per spell at the version it fired, oldest first, coloured by severity', () => {
    const marks = doctorMarks(history);
    expect(marks.map((m) => [m.id, m.version])).toEqual([
      ['saturated', 150],
      ['stagnant', 200],
      ['stagnant', 280],
    ]);
    expect(marks[0]?.color).toBe('#38bdf8');
    expect(marks[1]?.color).toBe('#fbbf24');
    expect(marks[2]?.label).toBe('⚠ Learning has stalled (version 280)');
  });

  it('places each mark on the timeline at its version’s publish, leaving out versions no longer held', () => {
    const events = [
      { kind: 'publish' as const, lane: 'store' as const, version: 150, t1: 5_000 },
      { kind: 'train-step' as const, lane: 'trainer' as const, version: 200, t1: 6_000 },
      { kind: 'publish' as const, lane: 'store' as const, version: 280, t1: 9_000 },
    ];
    expect(timedMarks(doctorMarks(history), events).map((m) => [m.version, m.t])).toEqual([
      [150, 5_000],
      [280, 9_000],
    ]);
    expect(timedMarks([], events)).toEqual([]);
  });
});
