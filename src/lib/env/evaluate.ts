import { Rng } from '../random';
import type { Sandbox } from '../sandbox/types';
import { DEFAULT_ENV_CONFIG, type EnvConfig } from './config';
import { Episode, programCode, type RewardParts } from './episode';
import { programsOfLength } from './grammar';
import { revisionCounts, type RevisionCounts } from './revision';
import { kindOf, LEVELS, type Level, type Task } from './suite';
import { sourceToTokens } from './tokenizer';
import { SUBMIT, tokenId } from './vocab';

/** Something that writes tokens: picks the next token of each unfinished episode, in one batch. */
export interface TokenAgent {
  readonly name: string;
  choose(episodes: readonly Episode[]): Promise<number[]> | number[];
  /** Log-probabilities of the tokens the last `choose` returned, when the agent knows them. */
  readonly lastLogProbs?: readonly number[];
  /** Value estimates of the states the last `choose` sampled from, when the agent has a value head. */
  readonly lastValues?: readonly number[];
}

/** A task with its split: held-out tasks are never trained on. */
export interface EvalTask extends Task {
  heldOut: boolean;
  /** A generalisation task (`generalisation.ts`; held out too): reported as a split of its own. */
  generalisation?: boolean;
}

/** The splits an evaluation reports: training, held-out, and the generalisation suite. */
export type EvalSplit = 'train' | 'heldOut' | 'generalisation';

export const EVAL_SPLITS: readonly EvalSplit[] = ['train', 'heldOut', 'generalisation'];

/** The split a task (or an episode of it) is reported in. */
export const splitOf = (t: { heldOut: boolean; generalisation?: boolean }): EvalSplit =>
  t.generalisation ? 'generalisation' : t.heldOut ? 'heldOut' : 'train';

/** What one evaluated episode came to. */
export interface EpisodeSummary {
  taskId: string;
  level: Level;
  heldOut: boolean;
  /** An episode of a generalisation task. */
  generalisation?: boolean;
  solved: boolean;
  turns: number;
  reward: number;
  /** What the reward was paid for (its parts sum to `reward`). */
  parts: RewardParts;
  /** Sandbox runs spent (the brute-force baseline's cost). */
  runs: number;
  /**
   * An episode of a tool-use task (DESIGN §3.1): whether it ended a turn with `<run>`, whether
   * the policy chose one (the automatic first run left out), and its revisions (`revisionCounts`).
   */
  toolUse?: { usedRun: boolean; policyRan: boolean } & RevisionCounts;
}

const NO_PARTS: RewardParts = { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 };

function meanOfParts(list: readonly RewardParts[]): RewardParts {
  const m = (pick: (p: RewardParts) => number) =>
    list.reduce((s, p) => s + pick(p), 0) / Math.max(1, list.length);
  return {
    pass: m((p) => p.pass),
    ranOk: m((p) => p.ranOk),
    closeness: m((p) => p.closeness),
    turnCost: m((p) => p.turnCost),
    noSubmit: m((p) => p.noSubmit),
    total: m((p) => p.total),
  };
}

/** The uniform-random baseline: a legal token, uniformly, at every position. */
export class RandomAgent implements TokenAgent {
  readonly name = 'random';
  private readonly rng: Rng;
  constructor(seed: number) {
    this.rng = new Rng(seed);
  }
  choose(episodes: readonly Episode[]): number[] {
    return episodes.map((e) => this.rng.pick(e.legalTokens()));
  }
}

/** Called for each token an agent writes, before it is stepped in: the episode, the token, its log-probability and the value estimate. */
export type OnToken = (episode: Episode, token: number, logProb: number, value: number) => void;

/**
 * Runs `tasks` as episodes with `agent`, all at once in one batch (the agent batches its
 * forward passes), through the sandbox; returns the finished episodes in task order.
 */
export async function runEpisodes(
  tasks: readonly Task[],
  agent: TokenAgent,
  sandbox: Sandbox,
  config: EnvConfig = DEFAULT_ENV_CONFIG,
  onToken?: OnToken,
): Promise<Episode[]> {
  const episodes = tasks.map((t) => new Episode(t, config));
  let active = episodes;
  while (active.length > 0) {
    const tokens = await agent.choose(active);
    for (const [j, ep] of active.entries()) {
      const token = tokens[j] ?? SUBMIT;
      onToken?.(ep, token, agent.lastLogProbs?.[j] ?? 0, agent.lastValues?.[j] ?? 0);
      await ep.step(token, sandbox);
    }
    active = active.filter((e) => !e.done);
  }
  return episodes;
}

/**
 * Plays one episode per task (× `samples`) with `agent`, `batch` episodes at a time, through
 * the sandbox. `onProgress(done, total)` reports finished episodes.
 */
export async function playEpisodes(
  tasks: readonly EvalTask[],
  agent: TokenAgent,
  sandbox: Sandbox,
  opts: {
    config?: EnvConfig;
    samples?: number;
    batch?: number;
    onProgress?: (done: number, total: number) => void;
  } = {},
): Promise<EpisodeSummary[]> {
  const queue = tasks.flatMap((t) => Array.from({ length: opts.samples ?? 1 }, () => t));
  const out: EpisodeSummary[] = [];
  for (let i = 0; i < queue.length; i += opts.batch ?? 32) {
    const chunk = queue.slice(i, i + (opts.batch ?? 32));
    const episodes = await runEpisodes(chunk, agent, sandbox, opts.config);
    episodes.forEach((ep, j) => out.push(summarizeEpisode(ep, chunk[j] ?? { heldOut: false })));
    opts.onProgress?.(out.length, queue.length);
  }
  return out;
}

export function summarizeEpisode(
  ep: Episode,
  split: { heldOut: boolean; generalisation?: boolean },
): EpisodeSummary {
  return {
    taskId: ep.task.id,
    level: ep.task.level,
    heldOut: split.heldOut,
    ...(split.generalisation ? { generalisation: true } : {}),
    solved: ep.solved,
    turns: ep.turns.length,
    reward: ep.parts.total,
    parts: { ...ep.parts },
    runs: ep.turns.length,
    ...(kindOf(ep.task) === 'tooluse'
      ? {
          toolUse: {
            usedRun: ep.runs > 0,
            policyRan: ep.policyRuns > 0,
            ...revisionCounts(ep.turns, ep.task),
          },
        }
      : {}),
  };
}

/** Default cap of the brute-force baseline: every program of up to 4 tokens (16 062) fits. */
export const BRUTE_FORCE_MAX_RUNS = 20_000;

/**
 * The brute-force baseline: enumerate programs by length (shortest first, vocabulary order),
 * run each on the visible examples, submit the first that matches them all. Its cost is the
 * number of sandbox runs it needs per task (capped at `maxRuns`; a task it cannot solve within
 * the cap costs `maxRuns` and scores as an episode with no submit). Runs on the same inputs are
 * shared between tasks (the sandbox's result cache would do the same), but each task is charged
 * every run it would need on its own. Its reward is the env's reward for submitting the found
 * program in one turn.
 */
export async function bruteForce(
  tasks: readonly EvalTask[],
  sandbox: Sandbox,
  opts: { config?: EnvConfig; maxRuns?: number; onProgress?: (done: number, total: number) => void } = {},
): Promise<EpisodeSummary[]> {
  const config = opts.config ?? DEFAULT_ENV_CONFIG;
  const maxRuns = opts.maxRuns ?? BRUTE_FORCE_MAX_RUNS;
  const maxLength = config.maxTokensPerTurn - 1;
  const programs: string[] = [];
  const candidates = (function* () {
    for (let len = 1; len <= maxLength; len++) yield* programsOfLength(len);
  })();
  const outputsByInputs = new Map<string, (number | null)[][]>();
  const out: EpisodeSummary[] = [];
  for (const task of tasks) {
    const ep = new Episode(task, config);
    const inputs = ep.shown.map((e) => e.input);
    const key = JSON.stringify(inputs);
    const known = outputsByInputs.get(key) ?? [];
    outputsByInputs.set(key, known);
    let found: string | null = null;
    let runs = 0;
    for (let i = 0; i < maxRuns; i++) {
      if (i >= programs.length) {
        const next = candidates.next();
        if (next.done) break;
        programs.push(next.value);
      }
      const program = programs[i] as string;
      if (i >= known.length) {
        const r = await sandbox.run({ code: programCode(program), inputs, limits: config.limits });
        known.push(
          inputs.map((_, j) =>
            r.ok && typeof r.outputs?.[j] === 'number' ? (r.outputs[j] as number) : null,
          ),
        );
      }
      runs = i + 1;
      if (known[i]?.every((y, j) => y === ep.shown[j]?.output)) {
        found = program;
        break;
      }
    }
    if (found !== null) {
      for (const t of sourceToTokens(found)) await ep.step(tokenId(t), sandbox);
      await ep.step(SUBMIT, sandbox);
    }
    out.push({
      taskId: task.id,
      level: task.level,
      heldOut: task.heldOut,
      ...(task.generalisation ? { generalisation: true } : {}),
      solved: ep.solved,
      turns: runs + (found === null ? 0 : 1),
      reward: found === null ? -config.reward.noSubmit : ep.parts.total,
      parts:
        found === null
          ? { ...NO_PARTS, noSubmit: -config.reward.noSubmit, total: -config.reward.noSubmit }
          : { ...ep.parts },
      runs: runs + (found === null ? 0 : 1),
    });
    opts.onProgress?.(out.length, tasks.length);
  }
  return out;
}

/** One row of the evaluation table. */
export interface EvalRow {
  agent: string;
  /** `greedy` (argmax) or `sampled` (temperature 1); baselines with one way of acting use `sampled`. */
  mode: 'greedy' | 'sampled';
  split: EvalSplit;
  level: Level | 'all';
  episodes: number;
  success: number;
  meanTurns: number;
  meanReward: number;
  /** Mean of each reward part: what the agent was paid for. */
  meanParts: RewardParts;
  runsPerTask: number;
  /** Rows of tool-use tasks only (DESIGN §3.1): how the tool was used. */
  toolUse?: ToolUseFigures;
}

/** How a group of tool-use episodes used `<run>` and its reports. */
export interface ToolUseFigures {
  /** Of the solved episodes, the share that used `<run>` (null when none solved). */
  solvedWithRun: number | null;
  /** Share of episodes in which the policy chose a `<run>` (an automatic first run does not count). */
  runFraction: number;
  /** Of the failed runs followed by another turn, the share whose next program passed (null: none failed). */
  reviseRate: number | null;
  /** Of the same, the share whose next program only copied report numbers and failed (null: none failed). */
  copyRate: number | null;
  /** Greedy play: success when the same policy must submit at the first turn, the same tasks again. */
  successOneTurn?: number;
}

/** The tool-use figures of a group of episodes (undefined when none is a tool-use episode). */
export function toolUseFigures(group: readonly EpisodeSummary[]): ToolUseFigures | undefined {
  const tools = group.flatMap((e) => (e.toolUse ? [e.toolUse] : []));
  if (tools.length === 0) return undefined;
  const tries = tools.reduce((s, t) => s + t.tries, 0);
  const ratio = (key: 'fixes' | 'copies') => (tries ? tools.reduce((s, t) => s + t[key], 0) / tries : null);
  return {
    solvedWithRun: withRun(group),
    runFraction: mean(tools.map((t) => (t.policyRan ? 1 : 0))),
    reviseRate: ratio('fixes'),
    copyRate: ratio('copies'),
  };
}

/** An env that allows one turn, a submit: what a tool-use task's agent scores without running. */
export const oneTurn = (c: EnvConfig): EnvConfig => ({ ...c, maxTurns: 1, allowRunOnLastTurn: false });

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Of the solved episodes, the share that used `<run>`; null when none solved. */
function withRun(group: readonly EpisodeSummary[]): number | null {
  const solved = group.filter((e) => e.solved);
  return solved.length ? mean(solved.map((e) => (e.toolUse?.usedRun ? 1 : 0))) : null;
}

/** Rows per split × level (and `all`), only for groups with episodes. */
export function summarize(
  agent: string,
  mode: EvalRow['mode'],
  episodes: readonly EpisodeSummary[],
): EvalRow[] {
  const rows: EvalRow[] = [];
  for (const split of EVAL_SPLITS) {
    for (const level of ['all', ...LEVELS] as const) {
      const group = episodes.filter((e) => splitOf(e) === split && (level === 'all' || e.level === level));
      if (group.length === 0) continue;
      rows.push({
        agent,
        mode,
        split,
        level,
        episodes: group.length,
        success: mean(group.map((e) => (e.solved ? 1 : 0))),
        meanTurns: mean(group.map((e) => e.turns)),
        meanReward: mean(group.map((e) => e.reward)),
        meanParts: meanOfParts(group.map((e) => e.parts)),
        runsPerTask: mean(group.map((e) => e.runs)),
        ...(group.some((e) => e.toolUse) ? { toolUse: toolUseFigures(group) } : {}),
      });
    }
  }
  return rows;
}

/** An agent to evaluate: a token agent (greedy and/or sampled play) or the brute-force search. */
export type AgentSpec =
  | { name: string; kind: 'tokens'; greedy?: TokenAgent; sampled: TokenAgent }
  | { name: string; kind: 'bruteforce'; maxRuns?: number };

/** Progress of an evaluation: which agent and mode, episodes done of total. */
export interface EvalProgress {
  agent: string;
  mode: EvalRow['mode'];
  done: number;
  total: number;
  /** The table's rows so far: sent as each agent (and mode) finishes, so a stopped evaluation keeps them. */
  rows?: EvalRow[];
}

/**
 * Evaluates every agent on `tasks` (training and held-out, per level) and returns the table:
 * token agents greedily (once per task) and sampled (`samples` per task), brute force once.
 */
export async function evaluateAgents(
  tasks: readonly EvalTask[],
  sandbox: Sandbox,
  agents: readonly AgentSpec[],
  opts: { config?: EnvConfig; samples?: number; onProgress?: (p: EvalProgress) => void } = {},
): Promise<EvalRow[]> {
  const rows: EvalRow[] = [];
  for (const a of agents) {
    if (a.kind === 'bruteforce') {
      const progress = (done: number, total: number) =>
        opts.onProgress?.({ agent: a.name, mode: 'sampled', done, total });
      const eps = await bruteForce(tasks, sandbox, {
        config: opts.config,
        maxRuns: a.maxRuns,
        onProgress: progress,
      });
      rows.push(...summarize(a.name, 'sampled', eps));
      opts.onProgress?.({
        agent: a.name,
        mode: 'sampled',
        done: tasks.length,
        total: tasks.length,
        rows: [...rows],
      });
      continue;
    }
    const modes: [EvalRow['mode'], TokenAgent, number][] = [];
    if (a.greedy) modes.push(['greedy', a.greedy, 1]);
    if ((opts.samples ?? 1) > 0 || !a.greedy) modes.push(['sampled', a.sampled, opts.samples || 1]);
    for (const [mode, agent, samples] of modes) {
      const progress = (done: number, total: number) =>
        opts.onProgress?.({ agent: a.name, mode, done, total });
      const eps = await playEpisodes(tasks, agent, sandbox, {
        config: opts.config,
        samples,
        onProgress: progress,
      });
      const mine = summarize(a.name, mode, eps);
      // Tool-use tasks played greedily once more, with one turn: what running adds.
      const tools = tasks.filter((t) => kindOf(t) === 'tooluse');
      if (mode === 'greedy' && tools.length > 0) {
        const config = oneTurn(opts.config ?? DEFAULT_ENV_CONFIG);
        const one = summarize(a.name, mode, await playEpisodes(tools, agent, sandbox, { config }));
        for (const r of mine) {
          const o = one.find((x) => x.split === r.split && x.level === r.level);
          if (r.toolUse && o) r.toolUse.successOneTurn = o.success;
        }
      }
      rows.push(...mine);
      opts.onProgress?.({ agent: a.name, mode, done: eps.length, total: eps.length, rows: [...rows] });
    }
  }
  return rows;
}

/** The bench's figures for one agent (the `tasks` scenario): greedy rows when the agent has them. */
export interface AgentFigures {
  successTrain: number | null;
  successHeldOut: number | null;
  /** Success on the generalisation suite; null when the tasks had none. */
  successGeneralisation: number | null;
  meanTurns: number;
  meanReward: number;
  sandboxRunsPerTask?: number;
}

export function agentFigures(rows: readonly EvalRow[], agent: string): AgentFigures {
  const mine = rows.filter((r) => r.agent === agent && r.level === 'all');
  const mode = mine.some((r) => r.mode === 'greedy') ? 'greedy' : 'sampled';
  const pick = mine.filter((r) => r.mode === mode);
  const train = pick.find((r) => r.split === 'train');
  const held = pick.find((r) => r.split === 'heldOut');
  const general = pick.find((r) => r.split === 'generalisation');
  const n = pick.reduce((s, r) => s + r.episodes, 0);
  const avg = (key: 'meanTurns' | 'meanReward' | 'runsPerTask') =>
    pick.reduce((s, r) => s + r[key] * r.episodes, 0) / Math.max(1, n);
  const out: AgentFigures = {
    successTrain: train ? train.success : null,
    successHeldOut: held ? held.success : null,
    successGeneralisation: general ? general.success : null,
    meanTurns: avg('meanTurns'),
    meanReward: avg('meanReward'),
  };
  if (agent === 'bruteforce') out.sandboxRunsPerTask = avg('runsPerTask');
  return out;
}
