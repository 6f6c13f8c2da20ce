import type { EnvConfig } from '../env/config';
import { HeldOutIndex, PROBE_INPUTS } from '../env/decontaminate';
import { Episode } from '../env/episode';
import { PROCEDURAL_FAMILIES, type Family, type GeneratedTask } from '../env/families';
import type { Example, Level, Task } from '../env/suite';
import { sourceToTokens } from '../env/tokenizer';
import { TOOLUSE_HIDDEN, TOOLUSE_SHOWN, TOOLUSE_TESTS } from '../env/tooluse';
import { PAD, RUN, SUBMIT, tokenId, VOCAB_SIZE } from '../env/vocab';
import type { Rng } from '../random';
import type { Sandbox } from '../sandbox/types';
import type { TokenBatch } from './batch';

/**
 * A warm start for revising (DESIGN §5): supervised sequences of a tool-use episode in which a
 * first program is run, its report read, and the right program submitted. The loss reads the fix
 * and its `<submit>`, and the first program only when it fits the shown example (a guess worth
 * making: the run then tells which one it is), never a near miss made only to be fixed.
 */

const signed = (n: number) => (n < 0 ? `-${-n}` : `+${n}`);

/**
 * The easy and medium shapes of the procedural space: too many functions to memorise, and each
 * constant seen in every place, so that reading it off the report pays.
 */
export const WIDE_FAMILIES: readonly Family[] = PROCEDURAL_FAMILIES.filter((f) => f.level !== 'hard');

const at = (inputs: readonly number[], f: (x: number) => number): Example[] =>
  inputs.map((x) => ({ input: x, output: f(x) }));

/**
 * Tool-use training tasks of the wide families at `levels`, with every task that computes what
 * a held-out or generalisation task computes at its inputs left out (`exclude`: those tasks).
 */
export function wideToolUseTasks(
  exclude: readonly Task[],
  levels: readonly Level[] = ['easy'],
): GeneratedTask[] {
  const index = new HeldOutIndex(exclude);
  if (index.unchecked.length > 0)
    throw new Error(`cannot check generated tasks against ${index.unchecked[0]}: an input outside 0–13`);
  const out: GeneratedTask[] = [];
  const seen = new Set<string>(); // one task per function: `(x+1)*2` is `2*x+2`
  for (const f of WIDE_FAMILIES) {
    if (!levels.includes(f.level)) continue;
    for (const p of f.params) {
      const value = (x: number) => f.apply(p, x);
      const probe = new Map(PROBE_INPUTS.map((x) => [x, value(x)]));
      const signature = [...probe.values()].join(',');
      if (seen.has(signature) || index.match((x) => probe.get(x)) !== null) continue;
      seen.add(signature);
      out.push({
        id: `tool:wide:${f.name}:${p.join(',')}`,
        level: f.level,
        kind: 'tooluse',
        examples: at(TOOLUSE_SHOWN, value),
        tests: at(TOOLUSE_TESTS, value),
        hidden: at(TOOLUSE_HIDDEN, value),
        family: f.name,
        program: f.source(p),
        heldOut: false,
      });
    }
  }
  return out;
}

/**
 * Wrong first programs for a task whose shown example is f(1) = y: the shown number copied as a
 * constant (the guess RL collapses to), other families' programs through the same example, and
 * the target with a constant off by one or two. Only programs that fail a test are kept.
 */
export function wrongGuesses(task: GeneratedTask): string[] {
  const shown = task.examples[0];
  const y = shown?.output ?? 0;
  const x0 = shown?.input ?? 1;
  const through = [`${y}`, `x${signed(y - x0)}`, ...(x0 !== 0 && y % x0 === 0 ? [`${y / x0}*x`] : [])];
  const nearMiss = [-2, -1, 1, 2].flatMap((d) => {
    const m = task.program.match(/\d+(?!.*\d)/); // the last constant
    if (!m || m.index === undefined) return [];
    const c = Number(m[0]) + d;
    return c < 0
      ? []
      : [task.program.slice(0, m.index) + String(c) + task.program.slice(m.index + m[0].length)];
  });
  const fails = (program: string) =>
    !(task.tests ?? []).every((t) => evalSimple(program, t.input) === t.output);
  return [...new Set([...through, ...nearMiss])].filter(
    (p) => p !== task.program && !/--|\+-|-\+/.test(p) && fails(p),
  );
}

/**
 * A start near the goal for a training task whose program is known: a wrong first guess
 * (`wrongGuesses`) and its outputs on the task's tests, for `Task.opening`; null when there is none.
 */
export function openingOf(task: Task, rng: Rng): Task['opening'] | null {
  const program = (task as Partial<GeneratedTask>).program;
  if (typeof program !== 'string' || !task.tests?.length) return null;
  const tests = task.tests;
  const guesses = wrongGuesses({ ...task, program, family: '', heldOut: false }).filter((g) =>
    tests.every((t) => Number.isFinite(evalSimple(g, t.input))),
  );
  if (guesses.length === 0) return null;
  const first = rng.pick(guesses);
  return { program: first, outputs: tests.map((t) => evalSimple(first, t.input)) };
}

/** The value of a program of the wide families' shapes (`c`, `x±b`, `a*x`, `a*x+b`, `(x+a)*b`, `x*x+b`), else NaN. */
function evalSimple(program: string, x: number): number {
  let m: RegExpMatchArray | null;
  if ((m = program.match(/^(-?\d+)$/))) return Number(m[1]);
  if ((m = program.match(/^x([+-]\d+)$/))) return x + Number(m[1]);
  if ((m = program.match(/^(\d+)\*x$/))) return Number(m[1]) * x;
  if ((m = program.match(/^(\d+)\*x\+(\d+)$/))) return Number(m[1]) * x + Number(m[2]);
  if ((m = program.match(/^\(x\+(\d+)\)\*(\d+)$/))) return (x + Number(m[1])) * Number(m[2]);
  if ((m = program.match(/^x\*x\+(\d+)$/))) return x * x + Number(m[1]);
  return NaN;
}

/** One supervised sequence: the played episode and, per position, the legal tokens and whether the loss reads it. */
export interface ReviseSequence {
  task: GeneratedTask;
  first: string;
  tokens: number[];
  /** 1 where the token at t + 1 is a target of the loss (the fix; a plausible first guess), [T]. */
  target: number[];
  /** Legal tokens at each position, [T × V]. */
  legal: Uint8Array;
  reward: number;
}

/**
 * Plays `first` `<run>` then the task's program `<submit>` in the real environment (its report
 * from the sandbox). Null when the programs do not fit the turn budget or the submit fails.
 */
export async function reviseSequence(
  task: GeneratedTask,
  first: string,
  env: EnvConfig,
  sandbox: Sandbox,
): Promise<ReviseSequence | null> {
  const ep = new Episode(task, env);
  const legal = new Uint8Array(env.contextLength * VOCAB_SIZE);
  const target: number[] = [];
  const play = async (program: string, control: number, read: boolean) => {
    for (const t of [...sourceToTokens(program).map(tokenId), control]) {
      if (ep.done) return false;
      const mask = ep.legalMask();
      if (!mask[t]) return false;
      legal.set(mask, (ep.tokens.length - 1) * VOCAB_SIZE);
      while (target.length < ep.tokens.length - 1) target.push(0);
      target.push(read ? 1 : 0);
      await ep.step(t, sandbox);
    }
    return true;
  };
  // A first program through the shown example is a guess worth imitating (the automatic run then
  // tests it); one that misses the shown example is only there to be fixed.
  const shown = task.examples[0];
  const plausible = shown !== undefined && evalSimple(first, shown.input) === shown.output;
  if (!(await play(first, RUN, plausible)) || ep.done) return null;
  if (!(await play(task.program, SUBMIT, true)) || !ep.solved) return null;
  return { task, first, tokens: [...ep.tokens], target, legal, reward: ep.parts.total };
}

/**
 * Sequences for `tasks`: per task, a wrong first program (drawn by `rng`), or with share
 * `rightFirst` the right one, run and then submitted as it was (reading "all passed").
 */
export async function reviseSequences(
  tasks: readonly GeneratedTask[],
  env: EnvConfig,
  sandbox: Sandbox,
  rng: Rng,
  rightFirst = 0.2,
): Promise<ReviseSequence[]> {
  const out: ReviseSequence[] = [];
  for (const task of tasks) {
    const wrong = wrongGuesses(task);
    const first = rng.next() < rightFirst || wrong.length === 0 ? task.program : rng.pick(wrong);
    const seq = await reviseSequence(task, first, env, sandbox);
    if (seq) out.push(seq);
  }
  return out;
}

/** A supervised batch of sequences padded to `length`: advantage 1 on the revise turn's tokens, the return as value target. */
export function reviseBatch(seqs: readonly ReviseSequence[], length: number): TokenBatch {
  const n = seqs.length * length;
  const b: TokenBatch = {
    batch: seqs.length,
    length,
    tokens: new Int32Array(n).fill(PAD),
    actions: new Int32Array(n).fill(PAD),
    mask: new Float32Array(n),
    advantages: new Float32Array(n),
    returns: new Float32Array(n),
    legal: new Uint8Array(n * VOCAB_SIZE),
    vocab: VOCAB_SIZE,
  };
  seqs.forEach((s, r) => {
    for (let t = 0; t < Math.min(length, s.tokens.length - 1); t++) {
      const i = r * length + t;
      b.tokens[i] = s.tokens[t] ?? PAD;
      b.actions[i] = s.tokens[t + 1] ?? PAD;
      const read = s.target[t] ?? 0;
      b.mask[i] = read;
      b.advantages[i] = read;
      b.returns[i] = s.reward;
      b.legal?.set(s.legal.subarray(t * VOCAB_SIZE, (t + 1) * VOCAB_SIZE), i * VOCAB_SIZE);
    }
  });
  return b;
}
