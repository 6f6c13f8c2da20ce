import type { Scenario } from '../harness.ts';
import { median } from '../harness.ts';
import { openLab } from './pipeline.ts';

const round = (x: number) => Math.round(x);

const scenario: Scenario = {
  name: 'faults',
  description:
    'an asynchronous run (η = 4, 3 rollout workers) in which rollout workers are made to crash and to hang, by turns: how long detection and replacement take (goals: within 1 s and 3 s), and whether a healthy worker was ever declared hung',
  async run({ baseUrl, launch, options, log }) {
    const rounds = Number(options.rounds?.[0] ?? 3);
    const workers = Number(options.workers?.[0] ?? 3);
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    const untilVersion = async (v: number) => {
      const deadline = Date.now() + 120_000;
      for (;;) {
        const [version, error] = await lab.evaluate(
          (l) => [l.run.dashboard?.version ?? -1, l.run.error] as const,
        );
        if (error) throw new Error(`the run failed: ${error}`);
        if (version >= v) return;
        if (Date.now() > deadline) throw new Error(`version ${v} not reached in 120 s`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    try {
      await lab.evaluate((l, w) => {
        void l.run.start({ config: { pipeline: { eta: 4, workers: w } }, evalEvery: 0 });
      }, workers);
      await untilVersion(3);
      const injected: { kind: 'crash' | 'hang'; lane: string; at: number }[] = [];
      for (let i = 0; i < 2 * rounds; i++) {
        const kind = i % 2 === 0 ? 'crash' : 'hang';
        const index = i % workers;
        const before = await lab.evaluate((l) => l.run.dashboard?.faults.length ?? 0);
        const at = await lab.evaluate((l, [n, k]) => l.run.session?.fault(n, k) ?? 0, [index, kind] as const);
        injected.push({ kind, lane: `rollout-${index}`, at });
        // Its replacement is ready, then the run goes on for a few versions before the next fault.
        const deadline = Date.now() + 60_000;
        while (
          !(await lab.evaluate(
            (l, [n, lane]) =>
              (l.run.dashboard?.faults ?? []).slice(n).some((f) => f.lane === lane && f.replacedAt !== null),
            [before, `rollout-${index}`] as const,
          ))
        ) {
          if (Date.now() > deadline) throw new Error(`${kind} of rollout-${index} not replaced in 60 s`);
          await new Promise((r) => setTimeout(r, 100));
        }
        const v = await lab.evaluate((l) => l.run.dashboard?.version ?? 0);
        await untilVersion(v + 3);
        log(`${kind} of rollout-${index} handled`);
      }
      const faults = await lab.evaluate((l) => l.run.dashboard?.faults ?? []);
      await lab.evaluate((l) => l.run.stop());
      // Each injected fault is the first record of its lane after it was injected.
      const matched = injected.map((x) => {
        const f = faults.find((r) => r.lane === x.lane && r.detectedAt >= x.at);
        if (!f) throw new Error(`no fault recorded for the ${x.kind} of ${x.lane}`);
        return { ...x, f };
      });
      const detect = (kind: string) =>
        matched.filter((m) => m.kind === kind).map((m) => m.f.detectedAt - m.at);
      const replace = matched.map((m) => (m.f.replacedAt ?? NaN) - m.f.detectedAt);
      const used = new Set(matched.map((m) => m.f));
      const result = {
        'faults.injected': injected.length,
        'faults.crashDetectMsMax': round(Math.max(...detect('crash'))),
        'faults.hangDetectMsMax': round(Math.max(...detect('hang'))),
        'faults.hangDetectMsMedian': round(median(detect('hang'))),
        'faults.replaceMsMax': round(Math.max(...replace)),
        // Faults the pool recorded that no injection caused: healthy workers declared hung or crashed.
        'faults.falseFaults': faults.filter((f) => !used.has(f)).length,
        'faults.wrongKind': matched.filter((m) => m.f.reason !== (m.kind === 'crash' ? 'crashed' : 'hung'))
          .length,
      };
      log(JSON.stringify(result));
      return result;
    } finally {
      await close();
    }
  },
};

export default scenario;
