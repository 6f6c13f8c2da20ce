import { DEFAULT_LEARNER } from '../../../src/lib/rl/learner-config.ts';
import {
  defaultRunConfig,
  withinOverrides,
  withOverrides,
  type RunOverrides,
} from '../../../src/lib/config/run-config.ts';
import {
  DEFAULT_SWEEP_SEEDS,
  fieldSweepLegs,
  parseNumberList,
  parseSweepValues,
  type SweepValue,
} from '../../../src/lib/config/field-sweep.ts';
import { DEFAULT_HINDSIGHT } from '../../../src/lib/rl/hindsight.ts';
import { BUILT_IN_BASES, isBuiltInBase } from '../../../src/lib/policy/bases.ts';
import {
  summariseFieldSweep,
  summariseSweep,
  type FieldSweepRun,
  type SweepRun,
} from '../../../src/lib/run/sweep-summary.ts';
import type { BenchContext, Scenario } from '../harness.ts';
import { runPipeline } from '../pipeline-run.ts';
import { runPresetSweep } from '../sweep-preset.ts';
import { openLab } from './pipeline.ts';

/**
 * AReaL's staleness table in the browser: each η × {PPO, decoupled PPO} × seed trains from fresh
 * weights on the easy level over the same samples (the page's trainer settings unless
 * `--updates` optimiser steps per batch, `--relabelled` rows a batch), then plays the newest
 * version greedily. `--lag bounded` (the default): η bounds the staleness and a run reaches what
 * its workers attain (`meanStaleness`). `--lag fixed`: the staleness is held at η
 * (`RunConfig.playLag`: synchronous, the workers play the weights η versions back), as
 * `e2e/bench/staleness-node.ts` holds it in node. `--base ID` starts every run from a built-in
 * base instead of fresh weights; `--maxGradNorm N` sets the gradient clip. `--evalEvery N` evaluates
 * every N versions and reads a run's success as the mean over its last quarter, as the node script
 * does (without it: the newest version's).
 *
 * `--field PATH --values A,B,… [--seeds 1,2,3]`: a sensitivity sweep instead (`config/field-sweep.ts`):
 * the page's settings (and `--set`) with the field at each value, each with every seed, from fresh
 * weights on the easy level over `--samples` episodes; per value the final greedy success on the
 * training and held-out tasks as mean ± sd over the seeds, and every leg. A value out of the field's
 * limits is refused, naming the field, before the browser starts.
 */
const scenario: Scenario = {
  name: 'sweep',
  description:
    '(--field PATH --values A,B --seeds 1,2,3: a sensitivity sweep of any numeric setting, final greedy success per value as mean ± sd over seeds, and every leg; --preset ID: a comparison preset run with Train, its legs and ordering) η ∈ {0, 1, 2, 4, 8, unbounded} × {PPO, decoupled PPO} × seeds at equal samples: throughput, training and held-out success per seed, mean ± sd per cell, and decoupled − PPO at the largest finite η and at 0 (AReaL’s staleness table, in the browser)',
  async run({ baseUrl, launch, options, log, config }) {
    // `--preset ID`: the comparison preset as a user runs it (Train), one seed, its legs as drawn.
    const presetId = options.preset?.[0];
    if (presetId) {
      const browser = await launch();
      try {
        const minutes = Number(options.minutes?.[0] ?? 40);
        return {
          'sweep.preset': await runPresetSweep(
            browser,
            baseUrl,
            presetId,
            minutes * 60_000,
            log,
            options.backend?.[0],
          ),
        };
      } finally {
        await browser.close();
      }
    }
    if (options.field?.[0]) return fieldSweep({ baseUrl, launch, options, log, config });
    const samples = Number(options.samples?.[0] ?? 160);
    const workers = Number(options.workers?.[0] ?? 3);
    const etas = (options.etas?.[0] ?? '0,1,2,4,8,inf')
      .split(',')
      .map((e) => (e === 'inf' ? Infinity : Number(e)));
    const seeds = (options.seeds?.[0] ?? '1').split(',').map(Number);
    const updates = options.updates?.[0];
    const relabelled = options.relabelled?.[0];
    const lag = options.lag?.[0] ?? 'bounded';
    const base = options.base?.[0];
    if (base !== undefined && !isBuiltInBase(base))
      throw new Error(`--base takes ${Object.keys(BUILT_IN_BASES).join(', ')}, got ${base}`);
    const maxGradNorm = Number(options.maxGradNorm?.[0] ?? DEFAULT_LEARNER.maxGradNorm);
    const evalEvery = Number(options.evalEvery?.[0] ?? 0);
    if (lag !== 'bounded' && lag !== 'fixed') throw new Error(`--lag takes bounded or fixed, got ${lag}`);
    if (lag === 'fixed' && !etas.every(Number.isFinite)) throw new Error('--lag fixed needs finite η values');
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    const rows: SweepRun[] = [];
    try {
      for (const eta of etas) {
        for (const loss of ['ppo', 'decoupled'] as const) {
          for (const seed of seeds) {
            const held = lag === 'fixed' ? { eta: 0, playLag: eta } : { eta };
            const settings = withinOverrides(
              {
                seed,
                pipeline: { ...held, workers },
                learner: { loss, maxGradNorm, ...(updates ? { updatesPerBatch: Number(updates) } : {}) },
                ...(relabelled ? { hindsight: { samplesPerBatch: Number(relabelled) } } : {}),
                policy: { startFrom: base ? { base } : null },
              },
              config,
            );
            const f = await runPipeline(lab, settings, samples, undefined, evalEvery);
            log(`η = ${eta}, ${loss}, seed ${seed}: ${JSON.stringify(f)}`);
            rows.push({
              eta,
              loss,
              seed,
              samplesPerSec: f.samplesPerSec,
              successHeldOut: f.late?.successHeldOut ?? f.successHeldOut,
              successTrain: f.late?.successTrain ?? f.successTrain,
              finalTrain: f.successTrain,
              meanStaleness: f.meanStaleness,
              staleDrops: f.staleDrops,
              interrupts: f.interrupts,
            });
          }
        }
      }
    } finally {
      await close();
    }
    const { cells, separation } = summariseSweep(rows);
    // JSON has no Infinity: an unbounded η reads null, as `PipelineFigures.eta` does.
    const eta = (e: number) => (Number.isFinite(e) ? e : null);
    return {
      'sweep.samples': samples,
      'sweep.workers': workers,
      'sweep.lag': lag,
      'sweep.updatesPerBatch': Number(updates ?? DEFAULT_LEARNER.updatesPerBatch),
      'sweep.relabelled': Number(relabelled ?? DEFAULT_HINDSIGHT.samplesPerBatch),
      'sweep.base': base ?? null,
      'sweep.maxGradNorm': maxGradNorm,
      'sweep.success':
        evalEvery > 0
          ? `mean of the evaluations over the last quarter (every ${evalEvery} versions)`
          : 'the newest version',
      'sweep.seeds': seeds,
      'sweep.rows': rows.map((r) => ({ ...r, eta: eta(r.eta) })),
      'sweep.cells': cells.map((c) => ({ ...c, eta: eta(c.eta) })),
      'sweep.separation': separation,
    };
  },
};

const r3 = (v: number) => Math.round(v * 1000) / 1000;

/** The `--field` sweep: legs value × seed, one after another in one page, summarised per value. */
async function fieldSweep({
  baseUrl,
  launch,
  options,
  log,
  config,
}: Pick<BenchContext, 'baseUrl' | 'launch' | 'options' | 'log' | 'config'>): Promise<
  Record<string, unknown>
> {
  const path = options.field?.[0] ?? '';
  const values = parseSweepValues(options.values?.[0] ?? '', path);
  const seeds = parseNumberList(options.seeds?.[0] ?? DEFAULT_SWEEP_SEEDS.join(','), '--seeds');
  const samples = Number(options.samples?.[0] ?? 640);
  const evalEvery = Number(options.evalEvery?.[0] ?? 0);
  // Checked on the config the legs run with (the defaults and --set) before anything starts.
  const legs = fieldSweepLegs(withOverrides(defaultRunConfig(), config), { path, values, seeds });
  const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
  const rows: (FieldSweepRun & Record<string, SweepValue | null>)[] = [];
  const t0 = Date.now();
  try {
    for (const leg of legs) {
      const settings: RunOverrides = withinOverrides(config, leg.overrides);
      const f = await runPipeline(lab, settings, samples, undefined, evalEvery);
      log(`${path} = ${leg.value}, seed ${leg.seed}: ${JSON.stringify(f)}`);
      rows.push({
        value: leg.value,
        seed: leg.seed,
        successTrain: f.late?.successTrain ?? f.successTrain,
        successHeldOut: f.late?.successHeldOut ?? f.successHeldOut,
        samplesPerSec: f.samplesPerSec,
        meanStaleness: f.meanStaleness,
      });
    }
  } finally {
    await close();
  }
  // JSON has no Infinity: an unbounded η reads null.
  const shown = (v: SweepValue) => (typeof v === 'string' || Number.isFinite(v) ? v : null);
  return {
    'sweep.field': path,
    'sweep.samples': samples,
    'sweep.seeds': seeds,
    'sweep.seconds': r3((Date.now() - t0) / 1000),
    'sweep.success':
      evalEvery > 0
        ? `mean of the evaluations over the last quarter (every ${evalEvery} versions)`
        : 'the newest version, greedy, on the easy training and held-out tasks',
    'sweep.values': summariseFieldSweep(rows).map((p) => ({ ...p, value: shown(p.value) })),
    'sweep.legs': rows.map((r) => ({ ...r, value: shown(r.value) })),
  };
}

export default scenario;
