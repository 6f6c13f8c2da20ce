import { RolloutBridge } from '../bridge/rollout-bridge';
import type { CurriculumView } from '../env/curriculum';
import { agentFigures } from '../env/evaluate';
import type { Level } from '../env/suite';
import { generateTasks } from '../env/families';
import { DEFAULT_MODEL_ARGS } from '../policy/config';
import { CodeWorkload, DEFAULT_CODE_RUN, type CodeRunConfig } from '../pipeline/code-workload';
import { SyncLoop, type IterationReport } from '../pipeline/sync-loop';
import type { StepMetrics } from '../policy/trainer';
import { BUILT_IN_SEED } from './tasks-state.svelte';
import type { TrainerState } from './trainer-state.svelte';

/** Greedy success of the current policy, measured during a run. */
export interface EvalPoint {
  iteration: number;
  /** Seconds since the run started. */
  seconds: number;
  /** Episodes collected so far. */
  episodes: number;
  /** Level evaluated (the training level, or every level with the curriculum off). */
  level: Level | 'all';
  successTrain: number;
  successHeldOut: number | null;
  /** Mean episode reward of greedy play on the level's training tasks. */
  meanRewardTrain: number;
}

/** Options of one run (the bench sets them; the page uses the defaults). */
export interface RunOptions {
  /** Stop after this many iterations. */
  maxIterations?: number;
  /** Train on this level only (the learn bench trains on easy). */
  level?: Level;
  /** Evaluate greedily on the level's training and held-out tasks every this many iterations (0: never). */
  evalEvery?: number;
  /** Overrides of the run's defaults (the bench compares estimators this way). */
  run?: Partial<CodeRunConfig>;
  /** Adam learning rate for this run (a fresh optimiser state); `DEFAULT_CODE_RUN.learningRate` otherwise. */
  learningRate?: number;
}

/**
 * UI state of a training run of the code-writing policy: the synchronous loop (η = 0) between
 * one rollout worker and the trainer worker, with its curriculum.
 */
export class RunState {
  running = $state(false);
  error = $state<string | null>(null);
  history = $state.raw<IterationReport[]>([]);
  /** The trainer's metrics of the last update. */
  metrics = $state.raw<StepMetrics | null>(null);
  curriculum = $state.raw<CurriculumView | null>(null);
  /** Curriculum on (easy → medium → hard) or off (every level at once); read at start. */
  curriculumOn = $state(true);
  estimator = $state<'rloo' | 'grpo' | 'gae'>('rloo');
  rolloutBackend = $state<string | null>(null);
  evals = $state.raw<EvalPoint[]>([]);

  private stopRequested = false;
  private readonly rollout = new RolloutBridge('rollout-0', (message) => {
    this.error = `rollout worker crashed: ${message}`;
    this.stopRequested = true;
  });

  constructor(private readonly trainer: TrainerState) {}

  /** Runs iterations until stopped (or `maxIterations`). The trainer must be ready. */
  async start(opts: RunOptions = {}): Promise<void> {
    const maxIterations = opts.maxIterations ?? Infinity;
    const evalEvery = opts.evalEvery ?? 10;
    if (this.running) return;
    if (this.trainer.status !== 'ready') {
      this.error = `the trainer is ${this.trainer.status}; wait until it is ready`;
      return;
    }
    this.running = true;
    this.stopRequested = false;
    this.error = null;
    this.history = [];
    this.evals = [];
    this.trainer.status = 'busy';
    const t0 = performance.now();
    try {
      const info = await this.rollout.api.init({ model: DEFAULT_MODEL_ARGS, seed: 1 });
      this.rolloutBackend = info.backend;
      const rollout = this.rollout.api;
      const trainer = this.trainer.api;
      await trainer.setLearningRate(
        opts.learningRate ?? opts.run?.learningRate ?? DEFAULT_CODE_RUN.learningRate,
      );
      const work = new CodeWorkload(
        { collect: (r) => rollout.collect(r), loadPolicy: (c, v) => rollout.loadPolicy(c, v) },
        {
          trainBatch: (b, v) => trainer.trainBatch(b, v),
          exportPolicy: (full) => trainer.exportPolicy(full),
        },
        generateTasks(BUILT_IN_SEED).filter((t) => !t.heldOut && (!opts.level || t.level === opts.level)),
        {
          ...DEFAULT_CODE_RUN,
          estimator: this.estimator,
          ...opts.run,
          curriculum: { ...DEFAULT_CODE_RUN.curriculum, enabled: this.curriculumOn },
        },
      );
      const loop = new SyncLoop(work);
      this.curriculum = work.curriculum.view();
      // The untrained (version 0) policy's figures, the baseline of the run's charts.
      if (evalEvery > 0) {
        await loop.start();
        const level = opts.level ?? (this.curriculumOn ? work.curriculum.level : 'all');
        this.evals = [await this.evaluate(level, 0, (performance.now() - t0) / 1000)];
      }
      while (!this.stopRequested && loop.iteration < maxIterations) {
        const report = await loop.iterate();
        this.history = [...this.history, report];
        this.curriculum = work.curriculum.view();
        this.metrics = work.lastMetrics;
        if (evalEvery > 0 && loop.iteration % evalEvery === 0) {
          const level = opts.level ?? (this.curriculumOn ? work.curriculum.level : 'all');
          this.evals = [
            ...this.evals,
            await this.evaluate(level, loop.iteration, (performance.now() - t0) / 1000),
          ];
        }
      }
    } catch (err) {
      this.error = err instanceof Error ? err.message : String(err);
    } finally {
      this.running = false;
      if (this.trainer.status === 'busy') this.trainer.status = 'ready';
    }
  }

  /** Greedy success of the rollout worker's current policy on the level's built-in tasks. */
  private async evaluate(level: Level | 'all', iteration: number, seconds: number): Promise<EvalPoint> {
    const tasks = generateTasks(BUILT_IN_SEED)
      .filter((t) => level === 'all' || t.level === level)
      .map(({ family: _f, program: _p, ...t }) => t);
    const rows = await this.rollout.api.evaluate({ tasks, agents: ['policy'], samples: 0, seed: 1 });
    const f = agentFigures(rows, 'policy');
    const train = rows.find((r) => r.agent === 'policy' && r.split === 'train' && r.level === 'all');
    const episodes = this.history.reduce((n, h) => n + h.stats.episodes, 0);
    return {
      iteration,
      seconds,
      episodes,
      level,
      successTrain: f.successTrain ?? 0,
      successHeldOut: f.successHeldOut,
      meanRewardTrain: train?.meanReward ?? 0,
    };
  }

  /** Evaluates the latest version now (between runs), appending the point to `evals`. */
  async evaluateLatest(level: Level | 'all'): Promise<EvalPoint> {
    if (this.running) throw new Error('the run is still going: stop it first');
    const last = this.history[this.history.length - 1];
    const point = await this.evaluate(
      level,
      last?.iteration ?? 0,
      this.evals[this.evals.length - 1]?.seconds ?? 0,
    );
    this.evals = [...this.evals, point];
    return point;
  }

  /** Stops after the iteration in progress. */
  stop(): void {
    this.stopRequested = true;
  }
}
