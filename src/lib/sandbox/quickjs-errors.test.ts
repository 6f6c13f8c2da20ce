import { describe, expect, it } from 'vitest';
import { classifyThrown, fail, withDeadline } from './quickjs-errors';

describe('classifyThrown', () => {
  it('names an interrupt by what stopped the run', () => {
    const interrupted = { name: 'InternalError', message: 'interrupted' };
    expect(classifyThrown(interrupted, 'run', 'deadline').kind).toBe('timeout');
    expect(classifyThrown(interrupted, 'run', 'memory').kind).toBe('memory');
  });

  it('tells a parse error from a SyntaxError thrown while running', () => {
    const parse = { name: 'SyntaxError', message: 'unexpected token', stack: '    at program.js:3:7\n' };
    expect(classifyThrown(parse, 'compile', null)).toMatchObject({
      kind: 'syntax',
      message: 'SyntaxError: unexpected token (line 3, column 7)',
    });
    const thrown = { name: 'SyntaxError', message: 'bad JSON', stack: '    at parse (native)\n' };
    expect(classifyThrown(thrown, 'compile', null).kind).toBe('runtime');
  });

  it('reports memory, stack and non-Error throws', () => {
    expect(classifyThrown({ message: 'out of memory' }, 'run', null)).toMatchObject({
      kind: 'memory',
      message: 'out of memory',
    });
    expect(classifyThrown({ name: 'RangeError', message: 'stack overflow' }, 'run', null).kind).toBe(
      'memory',
    );
    expect(classifyThrown('boom', 'run', null)).toMatchObject({
      kind: 'runtime',
      message: 'threw a string: "boom"',
    });
  });
});

describe('withDeadline', () => {
  it("puts the deadline into a timeout's message only", () => {
    const timeout = fail('timeout', 'the program ran past its deadline and was stopped', 0);
    expect(withDeadline(timeout, 500, 1).error?.message).toBe(
      'the program ran past its deadline (500 ms) and was stopped',
    );
    expect(withDeadline(timeout, 500, 4).error?.message).toContain('(500 ms, one for all 4 inputs together)');
    const runtime = fail('runtime', 'TypeError: x', 0);
    expect(withDeadline(runtime, 500, 4)).toBe(runtime);
  });
});
