import type { JSHandle } from 'playwright-core';
import { withinOverrides } from '../../../src/lib/config/run-config.ts';
import type { Scenario } from '../harness.ts';
import { CpuSampler } from '../cpu.ts';
import { runPipeline, taskKindOverrides, type PipelineFigures } from '../pipeline-run.ts';
import { labHandle, untilTrainerSettled, type Lab } from '../../support/lab.ts';

/** Opens the app with `?debug` (and `--backend`), waits for the trainer; returns a handle on `window.__lab`. */
export async function openLab(
  launch: Parameters<Scenario['run']>[0]['launch'],
  baseUrl: string,
  backend: string | undefined,
): Promise<{ lab: JSHandle<Lab>; close: () => Promise<void> }> {
  const browser = await launch();
  const page = await browser.newPage();
  await page.goto(`${baseUrl}?debug&wcTimeout=1${backend ? `&backend=${backend}` : ''}`);
  await untilTrainerSettled(page, 180_000);
  const lab = await labHandle(page);
  const error = await lab.evaluate((l) => l.trainer.error);
  if (error) throw new Error(`trainer failed to start: ${error}`);
  return { lab, close: () => browser.close() };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/**
 * The keys of the multi-turn pair (`pipeline.multiTurn.*`): throughput and speedup as the main
 * pair reports them, then how many turns the episodes took (the synchronous run's, and the
 * asynchronous run's mean), so that the long tail a synchronous step waits on is visible.
 */
function multiTurnKeys(
  sync: PipelineFigures,
  async_: PipelineFigures,
  cores: number,
): Record<string, unknown> {
  const speedup = async_.samplesPerSec / Math.max(1e-9, sync.samplesPerSec);
  const t = sync.turns;
  // The two runs' policies drift apart as they learn, and with them their episodes' length:
  // turns a second is the throughput with that difference taken out (roughly: turns differ too).
  const turnsPerSec = (f: PipelineFigures) => f.samplesPerSec * f.turns.mean;
  return {
    'pipeline.multiTurn.taskKind': 'tooluse',
    'pipeline.multiTurn.maxTurns': t.shares.length,
    'pipeline.multiTurn.syncSamplesPerSec': sync.samplesPerSec,
    'pipeline.multiTurn.asyncSamplesPerSec': async_.samplesPerSec,
    'pipeline.multiTurn.speedup': round3(speedup),
    'pipeline.multiTurn.idealSpeedup': sync.idealSpeedup,
    'pipeline.multiTurn.speedupOfIdeal': round3(speedup / sync.idealSpeedup),
    'pipeline.multiTurn.cores': cores || null,
    'pipeline.multiTurn.coreBoundSpeedup': sync.coreBoundSpeedup,
    'pipeline.multiTurn.trainerBusySync': sync.trainerBusy,
    'pipeline.multiTurn.trainerBusyAsync': async_.trainerBusy,
    'pipeline.multiTurn.adoptP95Ms': async_.adoptP95Ms,
    'pipeline.multiTurn.interrupts': async_.interrupts,
    'pipeline.multiTurn.staleDrops': async_.staleDrops,
    'pipeline.multiTurn.meanStalenessAsync': async_.meanStaleness,
    'pipeline.multiTurn.episodesSync': t.episodes,
    'pipeline.multiTurn.meanTurnsSync': t.mean,
    'pipeline.multiTurn.meanTurnsAsync': async_.turns.mean,
    'pipeline.multiTurn.turnsP95Async': async_.turns.p95,
    'pipeline.multiTurn.turnsPerSecSync': Math.round(turnsPerSec(sync) * 10) / 10,
    'pipeline.multiTurn.turnsPerSecAsync': Math.round(turnsPerSec(async_) * 10) / 10,
    'pipeline.multiTurn.turnSpeedup': round3(turnsPerSec(async_) / Math.max(1e-9, turnsPerSec(sync))),
    'pipeline.multiTurn.turnsP50': t.p50,
    'pipeline.multiTurn.turnsP95': t.p95,
    'pipeline.multiTurn.turnsMax': t.max,
    ...Object.fromEntries(t.shares.map((share, k) => [`pipeline.multiTurn.turnShare${k + 1}`, share])),
    // A group's episodes decode together: it lasts as long as its longest one.
    'pipeline.multiTurn.meanGroupMaxTurns': t.meanGroupMax,
    'pipeline.multiTurn.groupMsP50Sync': sync.groupMsP50,
    'pipeline.multiTurn.groupMsP95Sync': sync.groupMsP95,
    'pipeline.multiTurn.successSync': sync.successHeldOut,
    'pipeline.multiTurn.successAsync': async_.successHeldOut,
    'pipeline.multiTurn.successTrainSync': sync.successTrain,
    'pipeline.multiTurn.successTrainAsync': async_.successTrain,
  };
}

const scenario: Scenario = {
  name: 'pipeline',
  description:
    'trains the same number of samples synchronously (η = 0) and asynchronously (η = 4), 3 rollout workers, same seed: throughput, speedup against the ideal, trainer busy, adoption latency, interrupts, stale drops, held-out success; then the same pair on tool-use tasks (1–4 turns an episode, `pipeline.multiTurn.*`, off with --multiTurn 0)',
  async run({ baseUrl, launch, options, log, config }) {
    const samples = Number(options.samples?.[0] ?? 1600);
    const workers = Number(options.workers?.[0] ?? 3);
    const eta = options.eta?.[0] === 'inf' ? Infinity : Number(options.eta?.[0] ?? 4);
    const multiTurn = options.multiTurn?.[0] !== '0';
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    try {
      log(`η = 0, ${workers} workers, ${samples} samples…`);
      const cpu = new CpuSampler();
      const sync = await runPipeline(
        lab,
        withinOverrides({ pipeline: { eta: 0, workers } }, config),
        samples,
        cpu,
      );
      log(`sync: ${JSON.stringify(sync)}`);
      log(`η = ${eta}…`);
      const async_ = await runPipeline(
        lab,
        withinOverrides({ pipeline: { eta, workers } }, config),
        samples,
        new CpuSampler(),
      );
      log(`async: ${JSON.stringify(async_)}`);
      const speedup = async_.samplesPerSec / Math.max(1e-9, sync.samplesPerSec);
      let multi: Record<string, unknown> = {};
      if (multiTurn) {
        // The same pair (samples, workers, seed) on tool-use tasks: episodes of 1–4 turns.
        const tool = taskKindOverrides('tooluse');
        log(`tool use: η = 0, ${workers} workers, ${samples} samples…`);
        const mcpu = new CpuSampler();
        const msync = await runPipeline(
          lab,
          withinOverrides({ ...tool, pipeline: { eta: 0, workers } }, config),
          samples,
          mcpu,
        );
        log(`tool use sync: ${JSON.stringify(msync)}`);
        log(`tool use: η = ${eta}…`);
        const mtool = withinOverrides({ ...tool, pipeline: { eta, workers } }, config);
        const masync = await runPipeline(lab, mtool, samples, new CpuSampler());
        log(`tool use async: ${JSON.stringify(masync)}`);
        multi = multiTurnKeys(msync, masync, mcpu.cores);
      }
      return {
        'pipeline.samples': samples,
        'pipeline.workers': workers,
        'pipeline.eta': Number.isFinite(eta) ? eta : null,
        'pipeline.syncSamplesPerSec': sync.samplesPerSec,
        'pipeline.asyncSamplesPerSec': async_.samplesPerSec,
        'pipeline.speedup': Math.round(speedup * 1000) / 1000,
        'pipeline.idealSpeedup': sync.idealSpeedup,
        'pipeline.speedupOfIdeal': Math.round((speedup / sync.idealSpeedup) * 1000) / 1000,
        // What the ideal comes to on this machine's cores, from the cores the sync run kept busy.
        'pipeline.cores': cpu.cores || null,
        'pipeline.coreBoundSpeedup': sync.coreBoundSpeedup,
        'pipeline.trainerBusySync': sync.trainerBusy,
        'pipeline.trainerBusyAsync': async_.trainerBusy,
        'pipeline.adoptP95Ms': async_.adoptP95Ms,
        'pipeline.interrupts': async_.interrupts,
        'pipeline.staleDrops': async_.staleDrops,
        'pipeline.meanStalenessAsync': async_.meanStaleness,
        // The same lag in samples: episodes trained since a group's behaviour version (PipelineRL).
        'pipeline.meanLagSamplesSync': sync.meanLagSamples,
        'pipeline.meanLagSamplesAsync': async_.meanLagSamples,
        'pipeline.successSync': sync.successHeldOut,
        'pipeline.successAsync': async_.successHeldOut,
        'pipeline.successTrainSync': sync.successTrain,
        'pipeline.successTrainAsync': async_.successTrain,
        // The episodes' turns on the examples tasks, beside the multi-turn pair's.
        'pipeline.meanTurnsSync': sync.turns.mean,
        'pipeline.meanTurnsAsync': async_.turns.mean,
        'pipeline.turnsP95': sync.turns.p95,
        ...multi,
      };
    } finally {
      await close();
    }
  },
};

export default scenario;
