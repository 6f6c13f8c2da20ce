import { describe, expect, it } from 'vitest';
import type { Example } from './suite';
import {
  parseTestReport,
  testReport,
  testReportTokens,
  truncateReport,
  type TestReport,
} from './test-report';
import { renderTokens } from './tokenizer';
import { tokenId, VOCAB, VOCAB_SIZE } from './vocab';

/** Tests of `3*x` at 0, 2, 3, 4. */
const tests: Example[] = [0, 2, 3, 4].map((x) => ({ input: x, output: 3 * x }));

describe('test report', () => {
  it('counts the passing tests and lists the first failing ones in test order', () => {
    // x+2: 2, 4, 5, 6 against 0, 6, 9, 12 — every test fails.
    const r = testReport(tests, { outputs: [2, 4, 5, 6] });
    expect(r).toEqual({
      passed: 0,
      total: 4,
      failures: [
        { input: 0, expected: 0, output: 2 },
        { input: 2, expected: 6, output: 4 },
      ],
    });
    // 2*x+3 passes at 3 only.
    const some = testReport(tests, { outputs: [3, 7, 9, 11] }, 3);
    expect(some.passed).toBe(1);
    expect(some.failures.map((f) => f.input)).toEqual([0, 2, 4]);
  });

  it('shows no failing test when every test passes, and no more than asked', () => {
    expect(testReport(tests, { outputs: [0, 6, 9, 12] })).toEqual({ passed: 4, total: 4, failures: [] });
    expect(testReport(tests, { outputs: [1, 1, 1, 1] }, 0).failures).toEqual([]);
    const full = testReport(tests, { outputs: [1, 1, 1, 1] }, 4);
    expect(full.failures).toHaveLength(4);
    expect(truncateReport(full, 1).failures).toEqual([{ input: 0, expected: 0, output: 1 }]);
    expect(truncateReport(full, 1).passed).toBe(0);
  });

  it('reports an error as every test failing, with the error kind', () => {
    const r = testReport(tests, { error: 'runtime' });
    expect(r).toEqual({ passed: 0, total: 4, failures: [], error: 'runtime' });
    expect(renderTokens(testReportTokens(r))).toBe('pass 0 of 4 err:runtime <sep>');
  });

  it('writes a failing test as an example and what the program gave', () => {
    const r = testReport(tests, { outputs: [2, 4, 9, 12] });
    expect(renderTokens(testReportTokens(r))).toBe('pass 2 of 4 ; f( 0 )= 0 got 2 ; f( 2 )= 6 got 4 <sep>');
    const neg = testReport([{ input: 1, output: -12 }], { outputs: [150] });
    expect(renderTokens(testReportTokens(neg))).toBe('pass 0 of 1 ; f( 1 )= neg 1 2 got 1 5 0 <sep>');
  });

  it.each<[string, TestReport]>([
    ['all passing', { passed: 8, total: 8, failures: [] }],
    [
      'failures with negative and multi-digit numbers',
      {
        passed: 5,
        total: 12,
        failures: [
          { input: 0, expected: -7, output: 103 },
          { input: 13, expected: 198, output: -1 },
        ],
      },
    ],
    ['an error', { passed: 0, total: 7, failures: [], error: 'timeout' }],
  ])('reads its tokens back exactly: %s', (_name, report) => {
    expect(parseTestReport(testReportTokens(report))).toEqual(report);
  });

  it('reads big numbers back as infinite, and refuses what is not a report', () => {
    const big = { passed: 0, total: 1, failures: [{ input: 1, expected: 2, output: -5e9 }] };
    expect(parseTestReport(testReportTokens(big)).failures[0]?.output).toBe(-Infinity);
    expect(() => parseTestReport([tokenId('got'), tokenId('3')])).toThrow(/expected pass/);
    expect(() => parseTestReport([tokenId('pass'), tokenId('of')])).toThrow(/expected a number/);
    const extra = [...testReportTokens({ passed: 1, total: 1, failures: [] }), tokenId('1')];
    expect(() => parseTestReport(extra)).toThrow(/after <sep>/);
  });

  it('adds its tokens after every older one, whose ids stay as they were', () => {
    expect(VOCAB.slice(-2)).toEqual(['pass', 'of']);
    expect(VOCAB_SIZE).toBe(41);
    expect(tokenId('err:internal')).toBe(38);
    expect(tokenId('<submit>')).toBe(3);
  });
});
