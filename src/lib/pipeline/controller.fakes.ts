/** Fakes of the pipeline controller's tests: rollout workers, a trainer and a job source. */
import { DEFAULT_ENV_CONFIG } from '../env/config';
import type { Task } from '../env/suite';
import type { StepMetrics } from '../rl/trainer';
import type { TokenBatch } from '../rl/batch';
import { DEFAULT_REPLAY } from '../rl/replay-config';
import type { Trajectory } from '../rl/trajectory';
import { Pipeline, type JobSource, type PipelineConfig } from './controller';
import type { TimelineEvent } from './events';
import type { JobClass } from './scheduler';
import type {
  PipelineTrainerPort,
  PlayedGroup,
  RolloutJob,
  RolloutPort,
  StepReport,
  TrainInfo,
  TrainOutcome,
} from './types';

export const task = (id: string): Task => ({ id, level: 'easy', examples: [], hidden: [] });

export function trajectory(version: number, solved: boolean): Trajectory {
  return {
    taskId: 't',
    level: 'easy',
    group: 't',
    tokens: [1, 2],
    owned: [0, 1],
    rewards: [0, solved ? 1 : 0],
    logProbs: [0, -1],
    values: [0, 0],
    versions: [-1, version],
    legal: new Uint8Array(0),
    solved,
    turns: 1,
    return: solved ? 1 : 0,
    parts: { pass: 0, ranOk: 0, closeness: 0, turnCost: 0, noSubmit: 0, total: 0 },
  };
}

/** A rollout worker whose jobs finish when the test says so. */
export class FakeWorker implements RolloutPort {
  readonly jobs = new Map<number, { job: RolloutJob; resolve: (g: PlayedGroup) => void }>();
  readonly aborted: number[] = [];
  play(job: RolloutJob): Promise<PlayedGroup> {
    return new Promise((resolve) => this.jobs.set(job.jobId, { job, resolve }));
  }
  /** Tokens a preempted job of this worker says it had played, per episode (`keep`). */
  playedTokens = 3;
  /** Aborts come too late: the job is past storing its group, which `finish` still delivers. */
  abortTooLate = false;
  async abort(jobId: number, keep = false): Promise<void> {
    this.aborted.push(jobId);
    if (this.abortTooLate) return;
    const j = this.jobs.get(jobId);
    this.jobs.delete(jobId);
    if (!j) return;
    const n = j.job.samples;
    const prefix = () => ({
      tokens: Array.from({ length: this.playedTokens }, (_, i) => i + 1),
      logProbs: Array.from({ length: this.playedTokens }, () => -1),
      versions: Array.from({ length: this.playedTokens }, () => j.job.minVersion),
      values: Array.from({ length: this.playedTokens }, () => 0),
    });
    const kept = keep
      ? { episodes: Array.from({ length: n }, prefix), streams: Array.from({ length: n }, (_, i) => i) }
      : undefined;
    j.resolve({
      jobId,
      status: kept ? 'preempted' : 'aborted',
      ...(kept ? { kept } : {}),
      trajectories: [],
      relabelled: [],
      seqs: [],
      oldestVersion: j.job.minVersion,
      newestVersion: j.job.minVersion,
      interrupted: 0,
      startedAt: 0,
      endedAt: 0,
    });
  }
  /** Finishes a job with every token stamped `version` (default: the job's minVersion). */
  finish(jobId: number, version?: number, interrupted = 0): void {
    const j = this.jobs.get(jobId);
    if (!j) throw new Error(`no job ${jobId}`);
    this.jobs.delete(jobId);
    const v = version ?? j.job.minVersion;
    j.resolve({
      jobId,
      status: 'done',
      trajectories: Array.from({ length: j.job.samples }, (_, i) => trajectory(v, i === 0)),
      relabelled: [],
      seqs: Array.from({ length: j.job.samples }, (_, i) => j.job.seqBase + i),
      // Started at the job's version, or played with older weights (a fixed lag): the older.
      oldestVersion: Math.min(v, j.job.minVersion),
      newestVersion: v,
      interrupted,
      startedAt: 0,
      endedAt: 0,
    });
  }
  finishAll(version?: number): void {
    for (const id of [...this.jobs.keys()]) this.finish(id, version);
  }
}

export const METRICS: StepMetrics = {
  step: 1,
  lossKind: 'decoupled',
  loss: 0.5,
  pgLoss: 0,
  valueLoss: 0,
  entropy: 0,
  gradNorm: 0,
  approxKl: 0,
  clipFrac: 0,
  wMean: 1,
  lagKl: 0,
  wMax: 1,
  maskedFrac: 0,
  learningRate: 0,
  ms: 0,
};

/** A trainer whose steps finish when the test says so. */
export class FakeTrainer implements PipelineTrainerPort {
  calls: {
    seqs: number[];
    fromVersion: number;
    performance?: number;
    advantages: Float32Array;
    resolve: (o: TrainOutcome) => void;
    reject: (e: Error) => void;
  }[] = [];
  trainAndPublish(batch: TokenBatch, info: TrainInfo): Promise<TrainOutcome> {
    return new Promise((resolve, reject) =>
      this.calls.push({ ...info, advantages: batch.advantages, resolve, reject }),
    );
  }
  /** Finishes the oldest pending step. */
  finish(): void {
    const c = this.calls.shift();
    if (!c) throw new Error('no pending step');
    c.resolve({ version: c.fromVersion + 1, metrics: METRICS, startedAt: 0, publishedAt: 0 });
  }
}

export class FakeSource implements JobSource {
  n = 0;
  recorded = 0;
  cls: JobClass = 'normal';
  nextTask() {
    this.n += 1;
    return { task: task(`t${this.n}`), cls: this.cls, value: 0.25 - this.n / 1000 };
  }
  /** Job ids of the groups recorded, in the order they were. */
  readonly recordedJobs: number[] = [];
  record(group: PlayedGroup): void {
    this.recorded += 1;
    this.recordedJobs.push(group.jobId);
  }
  batch(groups: readonly PlayedGroup[], weights: readonly number[]) {
    const batch: TokenBatch = {
      batch: 1,
      length: 1,
      tokens: new Int32Array(1),
      actions: new Int32Array(1),
      mask: new Float32Array([1]),
      advantages: Float32Array.from(weights),
      returns: new Float32Array(1),
    };
    return { batch, priorities: groups.map(() => 1) };
  }
}

export const flush = () => new Promise((r) => setTimeout(r, 0));

export function configOf(over: Partial<PipelineConfig> = {}): PipelineConfig {
  return {
    eta: 0,
    batchGroups: 2,
    groupSize: 2,
    slotsPerWorker: 2,
    preemptAfterMs: 0,
    replay: DEFAULT_REPLAY,
    env: DEFAULT_ENV_CONFIG,
    relabelMaxAbs: 0,
    relabelMutations: 0,
    seed: 1,
    maxJobFailures: 1,
    ...over,
  };
}

export function setup(over: Partial<PipelineConfig> = {}, workers = 3) {
  const config = configOf(over);
  const source = new FakeSource();
  const trainer = new FakeTrainer();
  const events: TimelineEvent[] = [];
  const errors: string[] = [];
  const steps: number[] = [];
  const reports: StepReport[] = [];
  const p = new Pipeline(config, source, trainer, 'run', {
    emit: (e) => events.push(e),
    onError: (m) => errors.push(m),
    onStep: (r) => {
      steps.push(r.version);
      reports.push(r);
    },
  });
  const ws = Array.from({ length: workers }, () => new FakeWorker());
  ws.forEach((w, i) => p.addWorker(`w${i}`, w, `rollout-${i}`));
  p.start(0);
  const running = () => ws.reduce((n, w) => n + w.jobs.size, 0);
  return { p, source, trainer, ws, events, errors, steps, reports, running };
}
