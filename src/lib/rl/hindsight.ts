import type { EnvConfig } from '../env/config';
import { PROBE_INPUTS, type HeldOutIndex, type OutputAt } from '../env/decontaminate';
import { Episode, programCode } from '../env/episode';
import { kindOf, RELABELLED_PREFIX, type Example, type Level, type Task } from '../env/suite';
import { sourceToTokens } from '../env/tokenizer';
import { RUN, SUBMIT, tokenId, VOCAB_SIZE } from '../env/vocab';
import type { Sandbox } from '../sandbox/types';
import type { Rng } from '../random';
import type { Trajectory } from './trajectory';

/**
 * Hindsight relabelling (HER / goal-conditioned supervised learning, for programs): a program
 * the policy wrote for one task is a correct program for the task made of its own outputs. Each
 * program an episode ran or submitted becomes a solved one-turn episode of that relabelled task,
 * a positive example on top of the (mostly failing) episodes of the real tasks (a tool-use
 * episode keeps its runs: `relabelEpisode`). Nothing of the held-out tasks is used: the
 * relabelled tasks come from the policy's programs alone, and a pool given the run's held-out
 * tasks (`HeldOutIndex`) keeps out every program that computes one of them (decontamination),
 * counting them.
 */
export interface HindsightConfig {
  /** Relabelled episodes added to each training batch; 0 turns hindsight off. */
  samplesPerBatch: number;
  /** Advantage of every token of a relabelled episode (it solved its task). */
  advantage: number;
  /** Most recent relabelled programs kept, one entry per occurrence (docs/experiments.md: its window). */
  capacity: number;
  /** Fraction of a batch's relabelled episodes drawn uniformly over distinct tasks, not by occurrence. */
  uniformFraction: number;
  /**
   * A program is relabelled only when every output is an integer of at most this magnitude.
   * Default 200: the built-in tasks' outputs reach 198 (`(x+9)*9` at 13).
   */
  maxAbsOutput: number;
  /**
   * Fraction of jobs whose task is a relabelled task from the pool instead of a training task:
   * goals the policy reached once, posed again. Its attempts at them write neighbouring programs,
   * which relabelling then teaches in turn, so what it covers spreads past what it was rewarded for.
   */
  taskFraction: number;
  /**
   * Variants of each relabelled program with one token changed (`mutateProgram`: a digit for a
   * digit, an operator for an operator), relabelled with their own outputs too: `x+5` written
   * for one task also teaches `x-8` on the task `x-8` makes. The policy writes the constants and
   * operators its training tasks reward, so without them the pool holds few programs with others.
   * 0: only the programs written.
   */
  mutations: number;
}

export const DEFAULT_HINDSIGHT: HindsightConfig = {
  samplesPerBatch: 32,
  advantage: 1,
  capacity: 2000,
  uniformFraction: 0,
  maxAbsOutput: 200,
  taskFraction: 0.25,
  mutations: 2,
};

/** Throws with a readable message when `c` cannot configure hindsight relabelling. */
export function validateHindsight(c: HindsightConfig): void {
  for (const k of ['samplesPerBatch', 'capacity', 'mutations'] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 0)
      throw new Error(`hindsight ${k} must be an integer ≥ 0, got ${c[k]}`);
  }
  for (const k of ['uniformFraction', 'taskFraction'] as const) {
    if (!(c[k] >= 0 && c[k] <= 1)) throw new Error(`hindsight ${k} must be in [0, 1], got ${c[k]}`);
  }
  for (const k of ['advantage', 'maxAbsOutput'] as const) {
    if (!Number.isFinite(c[k]) || c[k] <= 0)
      throw new Error(`hindsight ${k} must be a positive number, got ${c[k]}`);
  }
}

/** True for the id of a relabelled task (one made of a program's own outputs). */
export function isRelabelledTask(taskId: string): boolean {
  return taskId.startsWith(RELABELLED_PREFIX);
}

/** The pool's key of the relabelled task a program with these outputs (shown, then hidden) makes. */
export function relabelledKey(level: Level, outputs: readonly number[]): string {
  return `${level}:${RELABELLED_PREFIX}${outputs.join(',')}`;
}

/** A relabelled episode and the key of its task (its outputs on every input). */
export interface Relabelled {
  /** The relabelled task's outputs, shown and hidden, joined: programs with equal keys are interchangeable. */
  key: string;
  /** Program tokens (the control token excluded): the shorter of two programs with one key is kept. */
  length: number;
  /** The relabelled task: the task's inputs, the program's outputs. */
  task: Task;
  trajectory: Trajectory;
  /**
   * The program's outputs at `PROBE_INPUTS` (null where not a number), for decontamination:
   * held-out tasks may show other inputs than the task it was relabelled on.
   */
  probe?: (number | null)[];
}

/** What a relabelled program outputs at an input: from its probe, else its task's table. */
export function relabelledOutputAt(r: Pick<Relabelled, 'task' | 'probe'>): OutputAt {
  const table = new Map<number, number | null>(
    [...r.task.examples, ...r.task.hidden].map((e) => [e.input, e.output]),
  );
  r.probe?.forEach((y, i) => table.set(PROBE_INPUTS[i] ?? NaN, y));
  return (x) => table.get(x);
}

/**
 * `program` relabelled with its own outputs on `task`'s inputs: a solved episode of the task those
 * outputs make (a tool-use task's `tests` included), or null when the program fails, an output is
 * not an integer within `maxAbs`, or the episode does not fit the env. The episode runs `runs`
 * first (each a `<run>`, answered as the relabelled task answers it), then submits `program`; with
 * no runs it is a one-turn episode. The program is also run at the `PROBE_INPUTS` the task lacks,
 * in the same call (its `probe`). Its policy tokens carry a NaN behaviour log-prob: they were not
 * sampled in this context, so the trainer stands π_prox in for π_behav (w = 1).
 */
export async function relabel(
  program: string,
  task: Task,
  sandbox: Sandbox,
  env: EnvConfig,
  maxAbs: number,
  runs: readonly string[] = [],
): Promise<Relabelled | null> {
  const parts = [task.examples, task.tests ?? [], task.hidden];
  const inputs = parts.flat().map((e) => e.input);
  const extra = PROBE_INPUTS.filter((x) => !inputs.includes(x));
  const all = [...inputs, ...extra];
  const result = await sandbox.run({ code: programCode(program), inputs: all, limits: env.limits });
  const outputs = result.outputs;
  if (!result.ok || !outputs || outputs.length !== all.length) return null;
  const at = new Map(all.map((x, i) => [x, outputs[i]]));
  const probe = PROBE_INPUTS.map((x) => {
    const y = at.get(x);
    return typeof y === 'number' && Number.isFinite(y) ? y : null;
  });
  const ys: number[] = [];
  for (const y of outputs.slice(0, inputs.length)) {
    if (typeof y !== 'number' || !Number.isInteger(y) || Math.abs(y) > maxAbs) return null;
    ys.push(y);
  }
  const value = new Map(inputs.map((x, i) => [x, ys[i] ?? 0]));
  const own = (es: readonly Example[]) =>
    es.map((e) => ({ input: e.input, output: value.get(e.input) ?? 0 }));
  const relabelled: Task = {
    id: `${RELABELLED_PREFIX}${ys.join(',')}`,
    level: task.level,
    ...(task.kind ? { kind: task.kind } : {}),
    examples: own(task.examples),
    ...(task.tests ? { tests: own(task.tests) } : {}),
    hidden: own(task.hidden),
  };
  // Under `autoRun` a tool-use episode's first turn is a run: the goal's program is run, then submitted.
  const first = env.autoRun && kindOf(relabelled) === 'tooluse' && runs.length === 0 ? [program] : runs;
  const turns = [...first.map((p) => [p, RUN] as const), [program, SUBMIT] as const];
  const tokens = turns.flatMap(([p, control]) => [...sourceToTokens(p).map(tokenId), control]);
  const ep = new Episode(relabelled, env);
  const legal = new Uint8Array(env.contextLength * VOCAB_SIZE);
  for (const t of tokens) {
    if (ep.done) return null;
    const mask = ep.legalMask();
    if (!mask[t]) return null; // the program does not fit this task's turn budget
    legal.set(mask, ep.tokens.length * VOCAB_SIZE);
    await ep.step(t, sandbox);
  }
  if (!ep.solved) return null;
  return {
    // Runs make another episode of the same task: each sequence of runs is kept apart.
    key: relabelledKey(task.level, ys) + (runs.length ? `|${runs.join(';')}` : ''),
    length: tokens.length - turns.length,
    task: relabelled,
    probe,
    trajectory: {
      taskId: relabelled.id,
      level: task.level,
      group: 'hindsight',
      tokens: [...ep.tokens],
      owned: [...ep.owned],
      rewards: [...ep.rewards],
      logProbs: ep.tokens.map((_, i) => (ep.owned[i] ? NaN : 0)),
      values: ep.tokens.map(() => 0),
      versions: ep.tokens.map(() => -1),
      legal: legal.slice(0, ep.tokens.length * VOCAB_SIZE),
      solved: true,
      turns: ep.turns.length,
      return: ep.parts.total,
      parts: { ...ep.parts },
    },
  };
}

/** Tokens a mutation swaps for one another: a constant's digit for a digit, an operator for an operator. */
const MUTABLE = ['0123456789', '+-*%'];

/**
 * Up to `n` distinct programs that differ from `program` in one token: a digit replaced by
 * another digit or an arithmetic operator by another (`x+5` → `x+8`, `x-5`, `x*5`), the
 * position and the new token drawn from `rng`; empty when it has neither. Some may not be
 * legal (`07`, `*x`) or may fail (`x%0`): `relabel` leaves those out.
 */
export function mutateProgram(program: string, n: number, rng: Rng): string[] {
  const spots = [...program].flatMap((c, i) => {
    const cls = MUTABLE.find((m) => m.includes(c));
    return cls ? [{ i, others: [...cls].filter((o) => o !== c) }] : [];
  });
  const out = new Set<string>();
  for (let tries = 0; spots.length > 0 && out.size < n && tries < 4 * n; tries++) {
    const { i, others } = rng.pick(spots);
    out.add(program.slice(0, i) + rng.pick(others) + program.slice(i + 1));
  }
  return [...out];
}

/**
 * Every distinct program of an episode (run or submitted), and `mutations` one-token variants of
 * each (`mutateProgram`), relabelled; failures are left out. In a tool-use episode (DESIGN §3.1)
 * each program is a goal after the runs before it: the turns up to it are kept, their reports
 * recomputed, and it is submitted (its variants after the same runs).
 */
export async function relabelEpisode(
  programs: readonly string[],
  task: Task,
  sandbox: Sandbox,
  env: EnvConfig,
  maxAbs: number,
  mutations = 0,
  rng?: Rng,
): Promise<Relabelled[]> {
  const out: Relabelled[] = [];
  if (kindOf(task) === 'tooluse') {
    const seen = new Set<string>();
    for (const [i, p] of programs.entries()) {
      const runs = programs.slice(0, i);
      for (const goal of [p, ...(rng ? mutateProgram(p, mutations, rng) : [])]) {
        const id = `${runs.join(';')}|${goal}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const r = await relabel(goal, task, sandbox, env, maxAbs, runs);
        if (r) out.push(r);
      }
    }
    return out;
  }
  const written = new Set(programs);
  const variants = rng ? [...written].flatMap((p) => mutateProgram(p, mutations, rng)) : [];
  for (const p of new Set([...written, ...variants])) {
    const r = await relabel(p, task, sandbox, env, maxAbs);
    if (r) out.push(r);
  }
  return out;
}

/** A hindsight pool as stored with a run (`HindsightPool.snapshot`). */
export interface HindsightSnapshot {
  /** Keys of the most recent relabelled programs, oldest first, one per occurrence. */
  recent: string[];
  /** The episode each key stands for (the shortest program seen). */
  best: { key: string; length: number; task: Task; trajectory: Trajectory; probe?: (number | null)[] }[];
}

/** A pool's entry: the shortest program seen with a key, and how many recent occurrences it has. */
interface PoolEntry {
  length: number;
  task: Task;
  trajectory: Trajectory;
  probe?: (number | null)[];
  refs: number;
}

/**
 * The relabelled episodes a run trains on: the last `capacity` occurrences (so that a batch
 * follows what the policy writes now), each standing for the shortest program seen with its
 * key (so that of two programs computing the same thing the simpler one is taught). With a
 * `heldOut` index, a relabelled program that computes a held-out task never enters it.
 */
export class HindsightPool {
  private readonly recent: string[] = [];
  private readonly best = new Map<string, PoolEntry>();
  /** Relabelled episodes added since the run started (or resumed). */
  added = 0;
  /** Relabelled episodes kept out since the run started (or resumed): each computes a held-out task. */
  decontaminated = 0;

  constructor(
    readonly capacity: number,
    private readonly heldOut: HeldOutIndex | null = null,
  ) {}

  /** The held-out task `r` computes (it may not be trained on), or null. */
  private contaminates(r: Pick<Relabelled, 'task' | 'probe'>): string | null {
    return this.heldOut ? this.heldOut.match(relabelledOutputAt(r)) : null;
  }

  get size(): number {
    return this.recent.length;
  }

  /** Distinct relabelled tasks in the pool. */
  get distinct(): number {
    return this.best.size;
  }

  /** Adds `r`; false when it computes a held-out task and is kept out (counted in `decontaminated`). */
  add(r: Relabelled): boolean {
    if (this.capacity === 0) return false;
    if (this.contaminates(r) !== null) {
      this.decontaminated += 1;
      return false;
    }
    this.added += 1;
    const held = this.best.get(r.key);
    if (held) {
      held.refs += 1;
      if (r.length < held.length)
        Object.assign(held, { length: r.length, trajectory: r.trajectory, probe: r.probe });
    } else {
      const { length, task, trajectory, probe } = r;
      this.best.set(r.key, { length, task, trajectory, probe, refs: 1 });
    }
    this.recent.push(r.key);
    while (this.recent.length > this.capacity) {
      const old = this.recent.shift() as string;
      const entry = this.best.get(old);
      if (entry && --entry.refs === 0) this.best.delete(old);
    }
    return true;
  }

  /**
   * The pool as data, for a resumed run (IndexedDB's structured clone keeps its typed arrays and
   * the relabelled rows' NaN log-probs): the recent keys in order and each key's episode.
   */
  snapshot(): HindsightSnapshot {
    return {
      recent: [...this.recent],
      best: [...this.best].map(([key, { length, task, trajectory, probe }]) => ({
        key,
        length,
        task,
        trajectory,
        ...(probe ? { probe } : {}),
      })),
    };
  }

  /**
   * Takes a snapshot's contents (a resumed run), the newest `capacity` of them; each episode's
   * count comes from the keys. Keys without an episode are left out, and so are episodes that
   * compute a held-out task (a pool saved without decontamination: checked at its own inputs).
   */
  restore(s: HindsightSnapshot): void {
    this.recent.length = 0;
    this.best.clear();
    // In the snapshot's order, which uniform draws go by; counted from the kept keys.
    for (const b of s.best) {
      if (this.contaminates(b) !== null) continue;
      const { length, task, trajectory, probe } = b;
      this.best.set(b.key, { length, task, trajectory, probe, refs: 0 });
    }
    for (const key of s.recent.slice(-this.capacity)) {
      const held = this.best.get(key);
      if (!held) continue;
      held.refs += 1;
      this.recent.push(key);
    }
    for (const [key, b] of this.best) if (b.refs === 0) this.best.delete(key);
  }

  /** A relabelled task drawn uniformly over the distinct tasks in the pool; null while it is empty. */
  pickTask(rng: Rng): Task | null {
    if (this.best.size === 0) return null;
    const key = rng.pick([...this.best.keys()]);
    return this.best.get(key)?.task ?? null;
  }

  /**
   * `n` relabelled episodes: a `uniform` fraction drawn uniformly over distinct tasks (rare
   * programs get taught too), the rest by occurrence. Empty while the pool is empty.
   */
  sample(n: number, uniform: number, rng: Rng): Trajectory[] {
    if (this.recent.length === 0) return [];
    const keys = uniform > 0 ? [...this.best.keys()] : [];
    return Array.from({ length: n }, () => {
      const key = rng.next() < uniform ? rng.pick(keys) : rng.pick(this.recent);
      return (this.best.get(key) as { trajectory: Trajectory }).trajectory;
    });
  }
}
