import { describe, expect, it } from 'vitest';
import { storedStepMetrics } from '../policy/metrics';
import type { TimelineEvent } from '../pipeline/events';
import type { EvalPoint, StepReport } from '../pipeline/types';
import { COMPARISON_PRESETS, PRESETS } from '../config/presets';
import { defaultRunConfig, type RunConfig } from '../config/run-config';
import { fieldSweepLegs } from '../config/field-sweep';
import {
  compare,
  lateSuccess,
  legOf,
  viewLegRunner,
  type ComparedView,
  type LegOutcome,
} from './comparisons';
import { fieldSweepPlan, raceEtas, sweepPlan, type Comparison } from './comparison-plans';

/** A step of `episodes` at `at` ms, trained for `trainMs` after waiting `waitMs`, with these stalenesses. */
const step = (
  at: number,
  episodes: number,
  staleness: number[],
  trainMs = 100,
  waitMs = 100,
): StepReport => ({
  version: 0,
  episodes,
  meanReturn: 0,
  success: 0,
  staleness,
  loss: 0,
  metrics: storedStepMetrics({}, 'decoupled'),
  waitMs,
  trainMs,
  at,
});

const outcome = (eta: number, steps: StepReport[], error: string | null = null): LegOutcome => ({
  runId: `run-${eta}`,
  loss: 'decoupled',
  steps,
  counters: undefined,
  error,
});

describe('comparisons', () => {
  it('times a leg from its second step, as the pipeline bench does', () => {
    const leg = legOf({ eta: 4 }, 20, outcome(4, [step(0, 10, [0]), step(1_000, 10, [1, 3])]), null);
    expect(leg.samplesPerSec).toBeCloseTo(10);
    expect(leg.meanStaleness).toBeCloseTo(4 / 3);
    expect(leg.idealSpeedup).toBeCloseTo(2);
  });

  it("reads a leg's policy lag as the mean of its steps' figures, leaving out figures a stored step lacked", () => {
    const lagged = (lagKl: number, clipFrac: number, maskedFrac: number, at: number): StepReport => ({
      ...step(at, 10, [1]),
      metrics: { ...storedStepMetrics({}, 'decoupled'), lagKl, clipFrac, maskedFrac },
    });
    const leg = legOf(
      { eta: 2 },
      30,
      outcome(2, [lagged(0.1, 0, 0.01, 0), lagged(0.3, 0.2, 0.03, 500), lagged(NaN, 0.1, NaN, 900)]),
      null,
    );
    expect(leg.lag.kl).toBeCloseTo(0.2);
    expect(leg.lag.clipped).toBeCloseTo(0.1);
    expect(leg.lag.masked).toBeCloseTo(0.02);
    expect(legOf({ eta: 2 }, 0, outcome(2, []), null).lag.kl).toBeNaN();
  });

  it('plans the sweep η by η, standard PPO then decoupled PPO, and runs each leg with its loss', async () => {
    expect(sweepPlan([0, Infinity])).toEqual([
      { eta: 0, loss: 'ppo' },
      { eta: 0, loss: 'decoupled' },
      { eta: Infinity, loss: 'ppo' },
      { eta: Infinity, loss: 'decoupled' },
    ]);
    const ran: [number, string | undefined][] = [];
    const legs = await compare('sweep', sweepPlan([0, 4]), 20, true, {
      run: async ({ eta, loss }) => {
        ran.push([eta, loss]);
        return { ...outcome(eta, [step(0, 10, [eta]), step(500, 10, [eta])]), loss: loss ?? 'decoupled' };
      },
      evaluate: async () => ({ train: 0.5, heldOut: null }),
      progress: () => undefined,
    });
    expect(ran).toEqual([
      [0, 'ppo'],
      [0, 'decoupled'],
      [4, 'ppo'],
      [4, 'decoupled'],
    ]);
    expect(legs.map((l) => `${l.eta} ${l.loss}`)).toEqual(['0 ppo', '0 decoupled', '4 ppo', '4 decoupled']);
  });

  it('plans a fixed-lag sweep for finite η only, and marks its legs', () => {
    expect(sweepPlan([0, 16], ['ppo'], { fixedLag: true })).toEqual([
      { eta: 0, loss: 'ppo', fixedLag: true },
      { eta: 16, loss: 'ppo', fixedLag: true },
    ]);
    expect(() => sweepPlan([0, Infinity], ['ppo'], { fixedLag: true })).toThrow(
      'a fixed lag needs a finite η',
    );
    const steps = [0, 500].map((at, i) => step(at, 10, [i, i]));
    expect(legOf({ eta: 2, fixedLag: true }, 20, outcome(0, steps), null)).toMatchObject({
      fixedLag: true,
      meanStaleness: 0.5,
    });
  });

  it('runs a leg per η, evaluating each when asked, and reports each leg as it ends', async () => {
    const shown: Comparison[] = [];
    const ran: number[] = [];
    const legs = await compare('sweep', [{ eta: 0 }, { eta: 2 }], 20, true, {
      run: async ({ eta }) => {
        ran.push(eta);
        return outcome(eta, [step(0, 10, [eta]), step(500, 10, [eta])]);
      },
      evaluate: async () => ({ train: 0.5, heldOut: 0.25 }),
      progress: (c) => shown.push(c),
    });
    expect(ran).toEqual([0, 2]);
    expect(legs.map((l) => [l.eta, l.runId, l.success?.heldOut])).toEqual([
      [0, 'run-0', 0.25],
      [2, 'run-2', 0.25],
    ]);
    expect(shown.map((c) => c.legs.length)).toEqual([0, 1, 2]);
    expect(legs.map((l) => l.strip)).toEqual([undefined, undefined]);
  });

  it("keeps each race leg's trainer and rollout events for its timeline strip", async () => {
    const events = (at: number): TimelineEvent[] => [
      { lane: 'store', kind: 'publish', t0: at, t1: at, version: 0 },
      { lane: 'rollout-0', kind: 'generate', t0: at, t1: at + 50, version: 0 },
      { lane: 'trainer', kind: 'train-step', t0: at + 50, t1: at + 80, version: 0 },
    ];
    const legs = await compare(
      'race',
      raceEtas(2).map((eta) => ({ eta })),
      20,
      false,
      {
        run: async ({ eta }) => ({
          ...outcome(eta, [step(0, 10, [0]), step(500, 10, [0])]),
          events: events(eta * 1000),
        }),
        evaluate: async () => ({ train: 0, heldOut: null }),
        progress: () => undefined,
      },
    );
    expect(legs.map((l) => [l.eta, l.strip?.origin, l.strip?.end, l.strip?.events.length])).toEqual([
      [0, 0, 80, 2],
      [2, 2000, 2080, 2],
    ]);
  });

  it('ends at a leg that stopped before its samples or failed', async () => {
    const shown: Comparison[] = [];
    const legs = await compare(
      'race',
      raceEtas(0).map((eta) => ({ eta })),
      20,
      false,
      {
        run: async ({ eta }) => outcome(eta, [step(0, 10, [0])]), // stopped at 10 of 20
        evaluate: async () => {
          throw new Error('the race does not evaluate');
        },
        progress: (c) => shown.push(c),
      },
    );
    expect(legs).toEqual([]);
    expect(shown.at(-1)).toEqual({
      kind: 'race',
      legs: [],
      plan: [{ eta: 0 }, { eta: 4 }],
      samples: 20,
      stopped: true,
    });
    expect(raceEtas(0)).toEqual([0, 4]);
    expect(raceEtas(8)).toEqual([0, 8]);
  });

  it('the staleness preset names the η values the sweep runs and where its measurements are', () => {
    const [preset] = COMPARISON_PRESETS;
    const shown = (preset?.sweep.etas ?? []).map((e) => (Number.isFinite(e) ? String(e) : '∞'));
    expect(preset?.watch).toContain(`η = ${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`);
    expect(preset?.watch).toContain('docs/experiments.md');
    // The text names the versions each leg trains for: its episodes over a batch's.
    const learner = preset?.sweep.legs.config?.learner;
    const perVersion = (learner?.tasksPerBatch ?? 0) * (learner?.groupSize ?? 0);
    expect(preset?.watch).toContain(`${(preset?.sweep.samples ?? 0) / perVersion} versions`);
    expect(PRESETS.map((p) => p.id)).not.toContain(preset?.id);
    // Each leg keeps the versions its workers play back: the largest η and the newest.
    const largest = Math.max(...(preset?.sweep.etas ?? []));
    expect(preset?.sweep.legs.config?.storage?.keepVersions).toBeGreaterThanOrEqual(largest + 1);
  });

  const D = defaultRunConfig();
  /** The settings a run view shows: the default config's learner and task, with this loss and level. */
  const viewSettings = (
    loss: RunConfig['learner']['loss'],
    level: RunConfig['task']['level'],
  ): ComparedView['settings'] => ({ learner: { ...D.learner, loss }, task: { ...D.task, level } });

  /** A run view that starts nothing and has nothing to show, with `over` in place. */
  const quietView = (over: Partial<ComparedView>): ComparedView => ({
    start: async () => undefined,
    evaluateLatest: async () => {
      throw new Error('not asked');
    },
    evaluationsDone: async () => undefined,
    evals: [],
    runId: 'run-1',
    settings: viewSettings('decoupled', null),
    steps: [],
    dashboard: null,
    error: null,
    events: [],
    curriculum: null,
    comparison: null,
    ...over,
  });

  it("starts each leg in the page's run view with its η and loss, and reports the loss it ran with", async () => {
    const started: unknown[] = [];
    const view = quietView({ start: async (opts) => void started.push(opts.config) });
    const runner = viewLegRunner(view);
    expect((await runner.run({ eta: 8, loss: 'ppo' }, 10)).loss).toBe('ppo');
    expect((await runner.run({ eta: 4 }, 10)).loss).toBe('decoupled'); // the race: the panel's loss
    expect((await runner.run({ eta: 16, loss: 'ppo', fixedLag: true }, 10)).loss).toBe('ppo');
    // What the sweep sets for every leg goes with it, under the leg's own η, loss and level.
    const legConfig = {
      learner: { updatesPerBatch: 4, loss: 'decoupled' as const },
      pipeline: { workers: 2 },
    };
    await runner.run({ eta: 2, loss: 'ppo', level: 'easy', config: legConfig }, 10);
    expect(started).toEqual([
      { pipeline: { eta: 8, playLag: 0 }, learner: { loss: 'ppo' } },
      { pipeline: { eta: 4, playLag: 0 } },
      // held at 16: synchronous, the workers 16 versions behind
      { pipeline: { eta: 0, playLag: 16 }, learner: { loss: 'ppo' } },
      {
        pipeline: { workers: 2, eta: 2, playLag: 0 },
        learner: { updatesPerBatch: 4, loss: 'ppo' },
        task: { level: 'easy' },
      },
    ]);
  });

  it('runs each cell of a seeded staleness sweep once per seed, and each leg on its seed', async () => {
    const plan = sweepPlan([0, 2], ['ppo', 'decoupled'], { fixedLag: true }, [1, 2, 3]);
    expect(plan.map((p) => `${p.eta} ${p.loss} ${p.seed}`)).toEqual(
      [0, 2].flatMap((eta) => ['ppo', 'decoupled'].flatMap((l) => [1, 2, 3].map((s) => `${eta} ${l} ${s}`))),
    );
    const started: unknown[] = [];
    const runner = viewLegRunner(quietView({ start: async (opts) => void started.push(opts.config) }));
    await runner.run(plan[1] ?? { eta: NaN }, 10);
    expect(started).toEqual([{ seed: 2, pipeline: { eta: 0, playLag: 0 }, learner: { loss: 'ppo' } }]);
  });

  it("runs a field sweep's legs with their field and seed over the panel's η and lag, and marks each leg", async () => {
    const legs = fieldSweepLegs(D, { path: 'learner.clipEps', values: [0.1, 0.4], seeds: [1, 2] });
    const plan = fieldSweepPlan(legs, 4);
    expect(plan.map((p) => [p.eta, p.field?.value, p.seed])).toEqual([
      [4, 0.1, 1],
      [4, 0.1, 2],
      [4, 0.4, 1],
      [4, 0.4, 2],
    ]);
    // Sweeping η itself: each leg's η is its value.
    const etas = fieldSweepPlan(fieldSweepLegs(D, { path: 'pipeline.eta', values: [0, 8], seeds: [1] }), 4);
    expect(etas.map((p) => p.eta)).toEqual([0, 8]);
    const started: unknown[] = [];
    const runner = viewLegRunner(quietView({ start: async (opts) => void started.push(opts.config) }));
    const last = plan[3] ?? { eta: NaN };
    const o = await runner.run(last, 10);
    expect(started).toEqual([{ learner: { clipEps: 0.4 }, seed: 2, pipeline: {} }]);
    const leg = legOf(last, 0, o, { train: 0.5, heldOut: null });
    expect([leg.field, leg.seed]).toEqual([{ path: 'learner.clipEps', value: 0.4 }, 2]);
  });

  it('reads a leg evaluated as it trained as the mean of its last quarter, the final evaluation included', async () => {
    const point = (iteration: number, successTrain: number, successHeldOut: number | null): EvalPoint => ({
      iteration,
      seconds: 0,
      episodes: 0,
      level: 'easy',
      suite: null,
      successTrain,
      successHeldOut,
      successGeneralisation: null,
      meanRewardTrain: successTrain,
    });
    // Versions 75 and 100 are the last quarter of 100; 50 is not. A version evaluated twice (the
    // final evaluation repeating the periodic one) counts once.
    const evals = [point(50, 0, 0), point(75, 0.5, 0.2), point(100, 1, null)];
    expect(lateSuccess(evals, 100)).toEqual({ train: 0.75, heldOut: 0.2 });
    expect(lateSuccess([...evals, point(100, 1, null)], 100)).toEqual({ train: 0.75, heldOut: 0.2 });
    const started: number[] = [];
    const view = quietView({
      start: async (opts) => void started.push(opts.evalEvery),
      evaluateLatest: async () => point(100, 1, null),
      evals,
      settings: viewSettings('decoupled', 'easy'),
    });
    const runner = viewLegRunner(view);
    await runner.run({ eta: 4, loss: 'ppo', evalEvery: 25 }, 10);
    expect(await runner.evaluate()).toEqual({ train: 0.75, heldOut: 0.2 });
    await runner.run({ eta: 4, loss: 'ppo' }, 10); // no evaluations as it trains: its last version's
    expect(await runner.evaluate()).toEqual({ train: 1, heldOut: null });
    expect(started).toEqual([25, 0]);
  });
});
