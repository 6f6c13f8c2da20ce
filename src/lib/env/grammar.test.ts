import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import { FAMILIES } from './families';
import {
  advance,
  complete,
  legalProgramTokens,
  minToFinish,
  parseProgram,
  programsOfLength,
  START,
} from './grammar';
import { programCode } from './episode';
import { sourceToTokens } from './tokenizer';
import { Rng } from '../random';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const stateOf = (src: string) => {
  let s = START;
  for (const t of sourceToTokens(src)) {
    const n = advance(s, t);
    if (!n) throw new Error(`illegal ${t} in ${src}`);
    s = n;
  }
  return s;
};

describe('program grammar', () => {
  it('accepts every built-in target program', () => {
    for (const f of FAMILIES)
      for (const p of f.params) expect(() => parseProgram(sourceToTokens(f.source(p)))).not.toThrow();
  });

  it('has no ) before a matching (, no : before a ?, no -- and no leading zeros', () => {
    expect(legalProgramTokens(START, 12)).not.toContain(')');
    expect(legalProgramTokens(stateOf('(x'), 12)).toContain(')');
    expect(legalProgramTokens(stateOf('x'), 12)).not.toContain(':');
    expect(legalProgramTokens(stateOf('x>1?2'), 12)).toContain(':');
    expect(legalProgramTokens(stateOf('x-'), 12)).not.toContain('-');
    expect(legalProgramTokens(stateOf('x+'), 12)).toContain('-');
    expect(legalProgramTokens(stateOf('0'), 12)).not.toContain('1');
    expect(legalProgramTokens(stateOf('10'), 12)).toContain('1');
    expect(legalProgramTokens(stateOf('100'), 12)).not.toContain('1'); // MAX_DIGITS
    expect(legalProgramTokens(stateOf('x'), 12)).not.toContain('2'); // x2 would be an identifier
    expect(legalProgramTokens(stateOf('2'), 12)).not.toContain('x');
    expect(legalProgramTokens(stateOf('(x)'), 12)).not.toContain('('); // a call
  });

  it('only offers tokens that can still finish within the budget', () => {
    expect(minToFinish(START)).toBe(2);
    expect(minToFinish(stateOf('(x+'))).toBe(3); // operand, ), control
    expect(minToFinish(stateOf('x?'))).toBe(4); // operand, :, operand, control
    // Two tokens left: an operand then the control token; nothing that opens a group.
    expect(legalProgramTokens(START, 2)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'x']);
    // One token left: only the control token, no program token.
    expect(legalProgramTokens(stateOf('x'), 1)).toEqual([]);
    expect(legalProgramTokens(stateOf('(x'), 2)).toEqual([')']);
  });

  it('enumerates programs by length, each complete and unique', () => {
    const one = [...programsOfLength(1)];
    expect(one).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 'x']);
    const three = [...programsOfLength(3)];
    expect(new Set(three).size).toBe(three.length);
    expect(three).toContain('x+1');
    expect(three).toContain('2*x');
    for (const p of three) expect(complete(parseProgram(sourceToTokens(p)))).toBe(true);
  });

  it('makes only syntactically valid JavaScript: 300 random legal programs compile in the sandbox', async () => {
    const rng = new Rng(3);
    for (let i = 0; i < 300; i++) {
      let s = START;
      let src = '';
      let budget = 12;
      // Walk legal tokens until the program can end, then end it with probability 1/3.
      while (true) {
        const legal = legalProgramTokens(s, budget);
        if (complete(s) && (legal.length === 0 || rng.next() < 0.33)) break;
        // The budget rule's promise: an incomplete program always has a legal next token.
        expect(legal.length, src).toBeGreaterThan(0);
        const t = rng.pick(legal);
        s = advance(s, t) ?? s;
        src += t;
        budget -= 1;
      }
      const r = await sandbox.run({ code: programCode(src), inputs: [3] });
      expect(r.error?.kind, `${src}: ${r.error?.message}`).not.toBe('syntax');
    }
  });
});
