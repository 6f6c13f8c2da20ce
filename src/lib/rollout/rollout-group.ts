/**
 * The group a rollout job returns: aborted (nothing stored), or done with its trajectories and
 * the programs relabelled in hindsight.
 */
import type { TurnRecord } from '../env/episode';
import { relabelEpisode, type Relabelled } from '../rl/hindsight';
import { Rng } from '../random';
import type { Trajectory } from '../rl/trajectory';
import type { Sandbox } from '../sandbox/types';
import { now } from '../pipeline/events';
import { oldestVersion } from '../pipeline/staleness';
import type { JobCost, KeptPrefix, PlayedGroup, RolloutJob } from '../pipeline/types';

/**
 * The group of a job aborted before it was stored: no trajectories, no seqs; with `kept`, a
 * preempted one and what it had played.
 */
export function abortedGroup(
  jobId: number,
  oldest: number,
  startedAt: number,
  newest: number,
  kept?: KeptPrefix,
): PlayedGroup {
  return {
    jobId,
    status: kept ? 'preempted' : 'aborted',
    ...(kept ? { kept } : {}),
    trajectories: [],
    relabelled: [],
    seqs: [],
    oldestVersion: oldest,
    newestVersion: newest,
    interrupted: 0,
    startedAt,
    endedAt: now(),
  };
}

/**
 * The group of a job played to the end: its trajectories under the job's seqs, the oldest and
 * newest version that wrote a token (`current` when none did), and each episode's turns if given.
 */
export function doneGroup(
  job: RolloutJob,
  trajectories: Trajectory[],
  relabelled: Relabelled[],
  run: {
    interrupted: number;
    startedAt: number;
    endedAt: number;
    current: number;
    turns?: TurnRecord[][];
    cost?: JobCost;
    episodeSandboxMs?: number[];
  },
): PlayedGroup {
  const versions = trajectories.flatMap((tr) => tr.versions.filter((v) => v >= 0));
  return {
    jobId: job.jobId,
    status: 'done',
    trajectories,
    relabelled,
    seqs: trajectories.map((_, i) => job.seqBase + i),
    oldestVersion: oldestVersion(versions),
    newestVersion: versions.length ? Math.max(...versions) : run.current,
    interrupted: run.interrupted,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    ...(run.turns ? { turns: run.turns } : {}),
    ...(run.cost ? { cost: run.cost } : {}),
    ...(run.episodeSandboxMs ? { episodeSandboxMs: run.episodeSandboxMs } : {}),
  };
}

/**
 * The job's programs relabelled with their own outputs (hindsight; none when the job asks for
 * none). An episode whose relabelling fails is reported to `failed` and skipped: relabelling only
 * adds examples, the group's own trajectories are kept without them.
 */
export async function relabelJob(
  job: RolloutJob,
  /** The programs each episode wrote, turn by turn. */
  episodes: readonly (readonly string[])[],
  sandbox: Sandbox,
  failed: (err: unknown) => void,
): Promise<Relabelled[]> {
  const relabelled: Relabelled[] = [];
  const rng = new Rng(job.seed); // which tokens the job's variants change
  for (const programs of job.relabelMaxAbs > 0 ? episodes : []) {
    const { task, env, relabelMaxAbs, relabelMutations } = job;
    try {
      relabelled.push(
        ...(await relabelEpisode(programs, task, sandbox, env, relabelMaxAbs, relabelMutations, rng)),
      );
    } catch (err) {
      failed(err);
    }
  }
  return relabelled;
}

/**
 * One sampling stream per episode of a job, drawn from the job's seed: an episode's tokens depend
 * on its seed and its own context only, not on which other jobs share the worker's decode batch
 * or when they joined it (that depends on timing). Apart from the relabelling stream (`job.seed`).
 */
export function episodeStreams(job: Pick<RolloutJob, 'seed' | 'samples'>): Rng[] {
  const seeds = new Rng((job.seed ^ 0x2545f491) >>> 0);
  return Array.from({ length: job.samples }, () => new Rng(Math.floor(seeds.next() * 2 ** 32)));
}
