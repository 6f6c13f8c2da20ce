import { PROGRAM_TOKENS, type ProgramToken } from './vocab';

/**
 * The grammar of a program, one token at a time (DESIGN §3): an expression in `x` built from
 * numbers, `x`, `+ - * %`, parentheses, comparisons `< >` and the ternary `? :`. The state says
 * which tokens may come next, so that every program the policy can finish is valid JavaScript,
 * and how many tokens it needs at least to finish, so that a turn always ends within its budget.
 */
export interface GrammarState {
  /** True when the next token must start an operand (a number, `x`, `(` or a unary `-`). */
  readonly expectOperand: boolean;
  /** Open groups, innermost last: `(` waits for `)`, `?` waits for `:`. */
  readonly open: readonly ('(' | '?')[];
  /** Digits of the number being written (0 when not in a number). */
  readonly digits: number;
  /** The number being written is `0` (no digit may follow it: `07` is not decimal). */
  readonly zero: boolean;
  /** The last token was `-` (another `-` would make the `--` operator). */
  readonly afterMinus: boolean;
  /** Program tokens so far. */
  readonly length: number;
}

/** Longest number literal, in digits. */
export const MAX_DIGITS = 3;

export const START: GrammarState = {
  expectOperand: true,
  open: [],
  digits: 0,
  zero: false,
  afterMinus: false,
  length: 0,
};

const DIGITS = new Set<string>(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
const BINARY = new Set<string>(['+', '-', '*', '%', '<', '>']);

/** The state after `token`, or null when the token is not legal here. */
export function advance(s: GrammarState, token: ProgramToken): GrammarState | null {
  const length = s.length + 1;
  const base = { open: s.open, digits: 0, zero: false, afterMinus: false, length };
  if (DIGITS.has(token)) {
    if (s.expectOperand) return { ...base, expectOperand: false, digits: 1, zero: token === '0' };
    if (s.digits === 0 || s.zero || s.digits >= MAX_DIGITS) return null;
    return { ...base, expectOperand: false, digits: s.digits + 1 };
  }
  if (s.expectOperand) {
    if (token === 'x') return { ...base, expectOperand: false };
    if (token === '(') return { ...base, expectOperand: true, open: [...s.open, '('] };
    if (token === '-' && !s.afterMinus) return { ...base, expectOperand: true, afterMinus: true };
    return null;
  }
  if (BINARY.has(token)) return { ...base, expectOperand: true, afterMinus: token === '-' };
  const top = s.open[s.open.length - 1];
  if (token === ')' && top === '(') return { ...base, expectOperand: false, open: s.open.slice(0, -1) };
  if (token === '?') return { ...base, expectOperand: true, open: [...s.open, '?'] };
  if (token === ':' && top === '?') return { ...base, expectOperand: true, open: s.open.slice(0, -1) };
  return null;
}

/** True when the program can end here (followed by `<run>` or `<submit>`). */
export function complete(s: GrammarState): boolean {
  return !s.expectOperand && s.open.length === 0;
}

/** Fewest tokens that finish the program from `s`, counting the control token that ends the turn. */
export function minToFinish(s: GrammarState): number {
  let n = s.expectOperand ? 1 : 0;
  for (const g of s.open) n += g === '(' ? 1 : 2; // `)`; or `:` and an operand
  return n + 1;
}

/**
 * Program tokens legal in state `s` when `budget` tokens are left in the turn (the control token
 * included): the token must be grammatical and leave enough budget to finish.
 */
export function legalProgramTokens(s: GrammarState, budget: number): ProgramToken[] {
  const out: ProgramToken[] = [];
  for (const t of PROGRAM_TOKENS) {
    const next = advance(s, t);
    if (next && minToFinish(next) <= budget - 1) out.push(t);
  }
  return out;
}

/** Parses a whole program token by token; throws naming the first illegal token. */
export function parseProgram(tokens: readonly ProgramToken[]): GrammarState {
  let s = START;
  tokens.forEach((t, i) => {
    const next = advance(s, t);
    if (!next)
      throw new Error(
        `token ${i} (${JSON.stringify(t)}) is not legal after ${JSON.stringify(tokens.slice(0, i).join(''))}`,
      );
    s = next;
  });
  if (!complete(s)) throw new Error(`program ${JSON.stringify(tokens.join(''))} is incomplete`);
  return s;
}

/**
 * Every complete program of exactly `length` tokens, in vocabulary order (the brute-force
 * baseline enumerates programs by length with this).
 */
export function* programsOfLength(length: number): Generator<string> {
  function* walk(s: GrammarState, prefix: string): Generator<string> {
    const left = length - s.length;
    if (left === 0) {
      if (complete(s)) yield prefix;
      return;
    }
    // `left + 1` tokens remain in a turn budget that also holds the control token.
    for (const t of legalProgramTokens(s, left + 1)) {
      const next = advance(s, t);
      if (next) yield* walk(next, prefix + t);
    }
  }
  yield* walk(START, '');
}
