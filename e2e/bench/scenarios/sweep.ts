import type { Scenario } from '../harness.ts';
import { runPipeline } from '../pipeline-run.ts';
import { openLab } from './pipeline.ts';

const scenario: Scenario = {
  name: 'sweep',
  description:
    'η ∈ {0, 1, 2, 4, 8, unbounded} × {PPO, decoupled PPO} at equal samples: throughput and held-out success (AReaL’s staleness table, in the browser)',
  async run({ baseUrl, launch, options, log }) {
    const samples = Number(options.samples?.[0] ?? 160);
    const workers = Number(options.workers?.[0] ?? 3);
    const etas = (options.etas?.[0] ?? '0,1,2,4,8,inf')
      .split(',')
      .map((e) => (e === 'inf' ? Infinity : Number(e)));
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    const rows: Record<string, unknown>[] = [];
    try {
      for (const eta of etas) {
        for (const loss of ['ppo', 'decoupled'] as const) {
          const f = await runPipeline(lab, { eta, loss, workers }, samples);
          log(`η = ${eta}, ${loss}: ${JSON.stringify(f)}`);
          rows.push({
            eta: f.eta,
            loss,
            samplesPerSec: f.samplesPerSec,
            successHeldOut: f.successHeldOut,
            successTrain: f.successTrain,
            meanStaleness: f.meanStaleness,
            staleDrops: f.staleDrops,
            interrupts: f.interrupts,
          });
        }
      }
    } finally {
      await close();
    }
    return { 'sweep.samples': samples, 'sweep.workers': workers, 'sweep.rows': rows };
  },
};

export default scenario;
