/** A rollout job waiting for the version it must start with (the engine holds none new enough yet). */
import type { EngineOptions, WaitingJob } from './rollout-engine-types';
import type { RolloutJob } from '../pipeline/types';

/**
 * Resolves once the engine holds `job.minVersion` (its entry woken) or the job is aborted, with
 * the job's entry (still in `waiting`: the caller removes it). Until then it asks the store every
 * `fetchAfterMs`, one fetch at a time, so a lost announce or a failed fetch does not leave the
 * job waiting for ever.
 */
export async function waitForVersion(
  waiting: Set<WaitingJob>,
  job: RolloutJob,
  opts: Pick<EngineOptions, 'fetch' | 'fetchAfterMs'>,
): Promise<WaitingJob> {
  let resolve = (): void => undefined;
  const arrived = new Promise<void>((r) => (resolve = r));
  let woken = false;
  const w: WaitingJob = {
    jobId: job.jobId,
    min: job.minVersion,
    aborted: false,
    wake: () => {
      woken = true;
      resolve();
    },
  };
  waiting.add(w);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ask = (): void => {
    timer = setTimeout(() => {
      opts
        .fetch(w.min)
        .catch(() => undefined) // the next fetch tries again
        .finally(() => {
          if (!woken) ask();
        });
    }, opts.fetchAfterMs);
  };
  ask();
  await arrived;
  clearTimeout(timer);
  return w;
}
