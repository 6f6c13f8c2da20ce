import { missingBase } from '../../src/lib/rl/restore';
import { packOptimizer, type Checkpoint } from '../../src/lib/policy/weights';
import { now } from '../../src/lib/pipeline/events';
import type { RunRecord, WeightsRecord } from '../../src/lib/storage/db';
import {
  ensureRun,
  getVersion,
  latestFullVersion,
  latestVersion,
  loraBaseOf,
  pruneVersions,
  putVersion,
} from '../../src/lib/storage/weights-store';
import { restoreTrainer, type TrainerContext } from './context';

/** Versions of the trainer panel's saved weights kept (kind 'check'): it loads the newest. */
const CHECK_VERSIONS_KEPT = 3;

/** Saving and loading the policy outside a pipeline run (the trainer panel's check, a run's start). */
export function checkHandlers(ctx: TrainerContext) {
  return {
    /**
     * Publishes the current policy and Adam state as the next version of `runId` in IndexedDB, as a
     * pipeline publish stores it: every parameter, or with LoRA the adapters (and the `lora` field).
     * A LoRA version merges into the run's newest full version below it: when that is not this
     * trainer's base (none yet, or another policy's), the base is stored first, as its own version.
     */
    async save(
      runId: string,
      config: Record<string, unknown> = {},
      kind?: RunRecord['kind'],
    ): Promise<{ version: number; bytes: number }> {
      const t = ctx.requireTrainer();
      const t0 = now();
      const d = await ctx.database();
      await ensureRun(d, { id: runId, name: runId, config, ...(kind ? { kind } : {}) });
      const latest = await latestVersion(d, runId);
      let next = Math.max(ctx.version, latest?.version ?? -1) + 1;
      const checkpoint: Checkpoint = {
        ...(await t.exportPolicy()),
        optimizer: await packOptimizer(t.optimizer),
      };
      const record: WeightsRecord = {
        runId,
        version: next,
        createdAt: Date.now(),
        checkpoint,
        metrics: { step: t.step },
        milestone: false,
      };
      const base = await missingBase(t, await loraBaseOf(d, record));
      let bytes = checkpoint.params.data.byteLength + (checkpoint.optimizer?.data.byteLength ?? 0);
      if (base) {
        await putVersion(d, { ...record, checkpoint: base, metrics: { step: base.step } });
        bytes += base.params.data.byteLength;
        next += 1;
      }
      await putVersion(d, { ...record, version: next });
      ctx.version = next;
      if (kind === 'check') {
        // The trainer panel loads only the newest: keep a few, and the full version a LoRA one
        // merges into (a check has no run list to delete them from).
        const base = await latestFullVersion(d, runId, next);
        await pruneVersions(d, runId, CHECK_VERSIONS_KEPT, -Infinity, (v) => v === base?.version);
      }
      ctx.emit({ lane: 'store', kind: 'publish', t0, t1: now(), version: ctx.version, meta: { bytes } });
      return { version: ctx.version, bytes };
    },

    /**
     * Loads a stored version (the latest when `v` is omitted) into the trainer, optimiser included;
     * null when the run has nothing stored and no version was asked for.
     */
    async load(runId: string, v?: number): Promise<{ version: number; step: number } | null> {
      const t = ctx.requireTrainer();
      const t0 = now();
      const d = await ctx.database();
      const record = v === undefined ? await latestVersion(d, runId) : await getVersion(d, runId, v);
      if (!record && v === undefined) return null;
      if (!record) throw new Error(`run ${runId} has no stored version ${v}`);
      const restored = await restoreTrainer(d, record, t.config);
      t.dispose();
      ctx.trainer = restored;
      ctx.version = record.version;
      ctx.emit({ lane: 'store', kind: 'load', t0, t1: now(), version: ctx.version });
      return { version: ctx.version, step: restored.step };
    },
  };
}
