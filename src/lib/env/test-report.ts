import { ERROR_KINDS, type SandboxErrorKind } from '../sandbox/types';
import type { Example } from './suite';
import { numberTokens } from './tokenizer';
import { SEP, tokenId, tokenText } from './vocab';

/**
 * What `<run>` answers on a tool-use task (DESIGN §3.1): what a developer gets from a test run —
 * how many of the task's tests pass and, for the first failing ones, the input, the expected
 * output and the program's output.
 */
export interface TestReport {
  passed: number;
  total: number;
  /** The first failing tests, in test order (at most the report's limit; none on an error). */
  failures: TestFailure[];
  /** The sandbox's error kind when the program did not run to numbers (then every test fails). */
  error?: SandboxErrorKind;
}

export interface TestFailure {
  input: number;
  expected: number;
  output: number;
}

/** Failing tests a report shows by default: enough to tell candidates apart, few enough to fit the context. */
export const MAX_REPORTED_FAILURES = 2;

/**
 * The report of a run of a program on `tests`: `outputs` when every call returned a finite
 * number, else the sandbox's `error`. Shows at most `maxFailures` failing tests.
 */
export function testReport(
  tests: readonly Example[],
  result: { outputs: readonly number[] } | { error: SandboxErrorKind },
  maxFailures: number = MAX_REPORTED_FAILURES,
): TestReport {
  if ('error' in result) return { passed: 0, total: tests.length, failures: [], error: result.error };
  const failing: TestFailure[] = [];
  tests.forEach((t, i) => {
    const y = result.outputs[i];
    if (y !== t.output) failing.push({ input: t.input, expected: t.output, output: y ?? NaN });
  });
  return {
    passed: tests.length - failing.length,
    total: tests.length,
    failures: failing.slice(0, Math.max(0, maxFailures)),
  };
}

/** The same report with only its first `n` failing tests (to fit the context). */
export const truncateReport = (r: TestReport, n: number): TestReport => ({
  ...r,
  failures: r.failures.slice(0, Math.max(0, n)),
});

/**
 * A report as observation tokens: `pass 5 of 7 ; f( 0 )= 0 got 2 ; f( 2 )= 6 got 4 <sep>`, or
 * `pass 0 of 7 err:runtime <sep>`. A failing test reads as an example (`f( x )= expected`) and
 * then what the program gave (`got y`).
 */
export function testReportTokens(r: TestReport): number[] {
  const out = ['pass', ...numberTokens(r.passed), 'of', ...numberTokens(r.total)];
  if (r.error) out.push(`err:${r.error}`);
  for (const f of r.failures)
    out.push(
      ';',
      'f(',
      ...numberTokens(f.input),
      ')=',
      ...numberTokens(f.expected),
      'got',
      ...numberTokens(f.output),
    );
  return [...out.map(tokenId), SEP];
}

/**
 * Reads report tokens back (the page's view of an episode, and the tests). Lossy where
 * `numberTokens` is: `big` reads as ±Infinity, `frac n` as n. Throws on anything else.
 */
export function parseTestReport(ids: readonly number[]): TestReport {
  const toks = ids.map(tokenText);
  let i = 0;
  const expect = (t: string) => {
    if (toks[i] !== t)
      throw new Error(`test report: expected ${t} at token ${i}, got ${toks[i] ?? 'the end'}`);
    i += 1;
  };
  const num = (): number => {
    const neg = toks[i] === 'neg' ? (i++, -1) : 1;
    if (toks[i] === 'big') return (i++, neg * Infinity);
    if (toks[i] === 'frac') i += 1;
    let digits = '';
    while (/^[0-9]$/.test(toks[i] ?? '')) digits += toks[i++];
    if (!digits) throw new Error(`test report: expected a number at token ${i}, got ${toks[i] ?? 'the end'}`);
    return neg * Number(digits);
  };
  expect('pass');
  const passed = num();
  expect('of');
  const report: TestReport = { passed, total: num(), failures: [] };
  const error = ERROR_KINDS.find((k) => toks[i] === `err:${k}`);
  if (error) {
    report.error = error;
    i += 1;
  }
  while (toks[i] === ';') {
    i += 1;
    expect('f(');
    const input = num();
    expect(')=');
    const expected = num();
    expect('got');
    report.failures.push({ input, expected, output: num() });
  }
  expect('<sep>');
  if (i !== toks.length) throw new Error(`test report: ${toks.length - i} tokens after <sep>`);
  return report;
}
