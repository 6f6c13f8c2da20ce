import type { JSHandle } from 'playwright-core';
import type { Scenario } from '../harness.ts';
import { CpuSampler } from '../cpu.ts';
import { runPipeline } from '../pipeline-run.ts';
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

const scenario: Scenario = {
  name: 'pipeline',
  description:
    'trains the same number of samples synchronously (η = 0) and asynchronously (η = 4), 3 rollout workers, same seed: throughput, speedup against the ideal, trainer busy, adoption latency, interrupts, stale drops, held-out success',
  async run({ baseUrl, launch, options, log }) {
    const samples = Number(options.samples?.[0] ?? 1600);
    const workers = Number(options.workers?.[0] ?? 3);
    const eta = options.eta?.[0] === 'inf' ? Infinity : Number(options.eta?.[0] ?? 4);
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    try {
      log(`η = 0, ${workers} workers, ${samples} samples…`);
      const cpu = new CpuSampler();
      const sync = await runPipeline(lab, { eta: 0, workers }, samples, cpu);
      log(`sync: ${JSON.stringify(sync)}`);
      log(`η = ${eta}…`);
      const async_ = await runPipeline(lab, { eta, workers }, samples, new CpuSampler());
      log(`async: ${JSON.stringify(async_)}`);
      const speedup = async_.samplesPerSec / Math.max(1e-9, sync.samplesPerSec);
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
      };
    } finally {
      await close();
    }
  },
};

export default scenario;
