import { describe, expect, it } from 'vitest';
import { defaultRunConfig, withOverrides, type RunOverrides } from '../config/run-config';
import type { StepMetrics } from '../policy/metrics';
import type { StepReport } from '../pipeline/types';
import { Rng } from '../random';
import { diagnose, fittedChange, type DetectorId, type DoctorSeries, type ProgramWritten } from './doctor';
import { DoctorTracker, HISTORY_KEPT } from './doctor-tracker';

/** Versions of the synthetic runs: 1 … N. */
const N = 400;

/** How a synthetic run's figures go with the version; each unset one is the healthy run's. */
interface Shape {
  reward?: (v: number) => number;
  success?: (v: number) => number;
  spread?: (v: number) => number;
  staleness?: (v: number) => number[];
  metrics?: (v: number) => Partial<StepMetrics>;
}

/**
 * A run of `n` versions: by default a healthy one, its reward and success rising steadily (short
 * of saturated), entropy halving, value loss settling, gradient norms near 1, a little noise.
 */
function run(shape: Shape = {}, n = N, seed = 1): StepReport[] {
  const rng = new Rng(seed);
  const noise = (a: number) => (rng.next() * 2 - 1) * a;
  return Array.from({ length: n }, (_, i) => {
    const v = i + 1;
    const t = v / N;
    const metrics: StepMetrics = {
      step: v,
      lossKind: 'decoupled',
      loss: 0,
      pgLoss: -0.3 + noise(0.1),
      valueLoss: 0.05 + 0.2 * Math.exp(-v / 100) + noise(0.01),
      entropy: 1.2 - 0.6 * t + noise(0.03),
      gradNorm: 1 + noise(0.3),
      approxKl: 0.005 + noise(0.002),
      clipFrac: 0.02 + noise(0.01),
      wMean: 1,
      wMax: 1.5,
      maskedFrac: 0.002,
      lagKl: 0.01,
      learningRate: 3e-3,
      ms: 200,
      ...shape.metrics?.(v),
    };
    return {
      version: v,
      episodes: 16,
      meanReturn: shape.reward?.(v) ?? 0.2 + 0.8 * t + noise(0.1),
      success: shape.success?.(v) ?? Math.min(1, Math.max(0, 0.1 + 0.7 * t + noise(0.05))),
      returnSpread: shape.spread?.(v) ?? 0.3 + noise(0.05),
      staleness: shape.staleness?.(v) ?? [1, 2, 1, 1],
      loss: metrics.pgLoss,
      metrics,
      waitMs: 10,
      trainMs: 200,
      at: v * 250,
    };
  });
}

/** Programs of a healthy run: many families, each task its own. */
const VARIED = ['x+1', '2*x', 'x*x+3', '5', 'x%4', '(x+2)*3', 'x>3?x:1', '3*x+1', 'x-2', '7'];
const programs = (texts: readonly string[], n = 48): ProgramWritten[] =>
  Array.from({ length: n }, (_, i) => ({
    version: N - n + i + 1,
    program: texts[i % texts.length] as string,
  }));

const config = (over: RunOverrides = {}) => withOverrides(defaultRunConfig(), over);
const ids = (series: DoctorSeries, over: RunOverrides = {}): DetectorId[] =>
  diagnose(series, config(over)).map((f) => f.id);
const healthy = (): DoctorSeries => ({ steps: run(), programs: programs(VARIED) });
/** From version `at` on, `then`; before it, `before`. */
const from = (at: number, before: (v: number) => number, then: (v: number) => number) => (v: number) =>
  v < at ? before(v) : then(v);

describe('the doctor on a healthy run', () => {
  it('finds nothing, with every setting at its default, for either loss', () => {
    expect(ids(healthy())).toEqual([]);
    expect(ids(healthy(), { learner: { loss: 'ppo' } })).toEqual([]);
    for (const seed of [2, 3, 4]) expect(ids({ ...healthy(), steps: run({}, N, seed) })).toEqual([]);
  });

  it('reads nothing before the warm-up, however bad the figures', () => {
    const bad = run({ metrics: () => ({ entropy: 0.01, approxKl: 1, pgLoss: 50 }), success: () => 0 }, 25);
    expect(ids({ steps: bad })).toEqual([]);
    expect(ids({ steps: run({ metrics: () => ({ approxKl: 1 }) }, 40) })).toEqual(['steps-too-large']);
  });
});

/** Each detector: a run provoked to fire it, and the rule's boundary on the healthy side. */
describe('each detector', () => {
  it('falling: the reward falls by more than its threshold over the trend window', () => {
    const falls = run({
      reward: from(
        250,
        (v) => 0.2 + v / 500,
        (v) => 0.7 - (v - 250) / 300,
      ),
    });
    const found = diagnose({ steps: falls }, config());
    expect(found.map((f) => f.id)).toContain('falling');
    const f = found.find((x) => x.id === 'falling');
    expect(f?.severity).toBe('critical');
    expect(f?.version).toBe(N);
    expect(f?.evidence[0]?.value).toBeLessThan(-0.2);
    // A threshold above the fall: quiet.
    expect(ids({ steps: falls }, { doctor: { fallingReturn: 5, fallingSuccess: 1 } })).not.toContain(
      'falling',
    );
  });

  it('falling: a drop in success at a promotion to a harder level is not a fall', () => {
    const promoted = run({
      success: from(
        300,
        () => 0.8,
        () => 0.2,
      ),
    });
    expect(ids({ steps: promoted })).toContain('falling');
    expect(ids({ steps: promoted, promotedAt: [300] })).not.toContain('falling');
  });

  it('stagnant: reward and success flat over the trend window, short of saturated', () => {
    const advice = (success: number) => {
      const found = diagnose(
        { steps: run({ reward: () => 0.3, success: () => success }) },
        config({ doctor: { plateauGrace: 0 } }),
      );
      expect(found.map((f) => f.id)).toEqual(['stagnant']);
      return found[0]?.advice;
    };
    expect(advice(0.1)).toMatch(/hindsight/); // little succeeds: make success reachable
    expect(advice(0.27)).toMatch(/entropyCoef/); // the constants plateau: explore
    // A slow climb is not stagnation.
    const slow = { steps: run({ reward: (v) => 0.3 + v / 2000, success: (v) => 0.27 + v / 2000 }) };
    expect(ids(slow, { doctor: { plateauGrace: 0 } })).toEqual([]);
    // Flat but solving everything: that is saturation, not stagnation.
    const solved = ids(
      { steps: run({ reward: () => 1.1, success: () => 0.97 }) },
      { doctor: { plateauGrace: 0 } },
    );
    expect(solved).toContain('saturated');
    expect(solved).not.toContain('stagnant');
  });

  it('loss-volatile: the policy loss’s spread over the loss window is above its threshold', () => {
    const rng = new Rng(9);
    const swings = run({ metrics: (v) => (v > N - 30 ? { pgLoss: (rng.next() * 2 - 1) * 2 } : {}) });
    expect(ids({ steps: swings })).toEqual(['loss-volatile']);
    expect(ids({ steps: swings }, { doctor: { lossStd: 5 } })).toEqual([]);
  });

  it('entropy-collapse: entropy far below the run’s early entropy while success is short', () => {
    const collapse = run({
      metrics: (v) => ({ entropy: Math.max(0.02, 1.2 - v / 250) }),
      success: () => 0.3,
    });
    expect(ids({ steps: collapse })).toContain('entropy-collapse');
    // A converged policy solving its tasks may be sharp: quiet.
    const converged = run({
      metrics: (v) => ({ entropy: Math.max(0.02, 1.2 - v / 250) }),
      success: () => 0.95,
    });
    expect(ids({ steps: converged })).not.toContain('entropy-collapse');
  });

  it('echo-trap: the reward spread within tasks shrinks before the mean falls', () => {
    const trap = run({
      spread: from(
        N - 60,
        () => 0.3,
        () => 0.03,
      ),
    });
    expect(ids({ steps: trap })).toEqual(['echo-trap']);
    // Groups that never differed (no spread from the start) are not a spread that shrank.
    expect(ids({ steps: run({ spread: () => 0.01 }) })).toEqual([]);
    // Runs stored before the spread was recorded: nothing to read.
    const old = run().map(({ returnSpread: _, ...s }) => s);
    expect(ids({ steps: old })).toEqual([]);
  });

  it('value-diverging: the value loss grows past a multiple of its lowest window', () => {
    const diverging = run({
      metrics: (v) => (v > N - 60 ? { valueLoss: 0.06 * 1.05 ** (v - (N - 60)) } : {}),
    });
    const found = diagnose({ steps: diverging }, config());
    expect(found.map((f) => f.id)).toEqual(['value-diverging']);
    expect(found[0]?.severity).toBe('warning');
    expect(diagnose({ steps: diverging }, config({ learner: { estimator: 'gae' } }))[0]?.severity).toBe(
      'critical',
    );
  });

  it('grad-spikes: enough gradient norms far above the window’s median', () => {
    const spiky = run({ metrics: (v) => ([380, 390, 395].includes(v) ? { gradNorm: 12 } : {}) });
    const found = diagnose({ steps: spiky }, config());
    expect(found.map((f) => f.id)).toEqual(['grad-spikes']);
    expect(found[0]?.evidence.find((e) => e.name === 'spikes')?.value).toBe(3);
    const twice = run({ metrics: (v) => ([390, 395].includes(v) ? { gradNorm: 12 } : {}) });
    expect(ids({ steps: twice })).toEqual([]);
    // Saturated: gradients near zero (a median of 0.05), so norms of 0.4 are not spikes.
    const solved = run({
      success: () => 0.99,
      reward: () => 1.1,
      metrics: (v) => ({ gradNorm: [380, 390, 395].includes(v) ? 0.4 : 0.05 }),
    });
    expect(ids({ steps: solved })).toEqual(['saturated']);
  });

  it('non-finite: a refused step or a non-finite metric, even before the warm-up', () => {
    const found = diagnose({ steps: run({}, 5), refused: [5] }, config());
    expect(found.map((f) => [f.id, f.severity, f.version])).toEqual([['non-finite', 'critical', 5]]);
    const nan = run({ metrics: (v) => (v === N ? { gradNorm: NaN } : {}) });
    expect(ids({ steps: nan })).toContain('non-finite');
    // Out of the window: it has cleared.
    expect(ids({ steps: run(), refused: [100] })).toEqual([]);
  });

  it('steps-too-large: approx-KL or the clipped share above its threshold', () => {
    expect(ids({ steps: run({ metrics: () => ({ approxKl: 0.2 }) }) })).toEqual(['steps-too-large']);
    expect(ids({ steps: run({ metrics: () => ({ clipFrac: 0.5 }) }) })).toEqual(['steps-too-large']);
    expect(ids({ steps: run({ metrics: () => ({ approxKl: 0.04, clipFrac: 0.25 }) }) })).toEqual([]);
  });

  it('too-stale: a staleness standard PPO cannot bear, or decoupled PPO masking too much', () => {
    const stale = run({ staleness: () => [4, 5, 3, 4] });
    expect(ids({ steps: stale }, { learner: { loss: 'ppo' } })).toEqual(['too-stale']);
    expect(ids({ steps: stale })).toEqual([]); // the decoupled loss corrects it
    const masking = run({ metrics: () => ({ maskedFrac: 0.12 }) });
    expect(ids({ steps: masking })).toEqual(['too-stale']);
  });

  it('saturated: success at its threshold over the saturation window, advising the curriculum', () => {
    const easy = run({
      success: from(
        N - 80,
        (v) => v / N,
        () => 0.96,
      ),
    });
    const found = diagnose(
      { steps: easy, curriculum: { enabled: true, level: 'easy', next: 'medium' } },
      config(),
    );
    expect(found.map((f) => f.id)).toEqual(['saturated']);
    expect(found[0]?.advice).toMatch(/promoteAt/);
    const fixed = diagnose(
      { steps: easy },
      config({ task: { level: 'easy', curriculum: { enabled: false } } }),
    );
    expect(fixed[0]?.advice).toMatch(/task\.level/);
  });

  it('one-family: the newest programs are bare constants, or one program', () => {
    const constants = {
      steps: run(),
      programs: programs(['3', '5', '3', '7', '3', '2', 'x+1', '3', '4', '6', '1', '3']),
    };
    const past = { doctor: { plateauGrace: 0 } };
    // 11 of 12 are constants: 92 %.
    expect(ids(constants, past)).toEqual(['one-family']);
    const copy = { steps: run(), programs: programs(['x*2', 'x*2', 'x*2', 'x+1']) };
    const found = diagnose(copy, config(past));
    expect(found.map((f) => f.id)).toEqual(['one-family']);
    expect(found[0]?.meaning).toMatch(/x\*2/);
    // Fewer programs than the window: not judged.
    expect(ids({ steps: run(), programs: programs(['3'], 20) }, past)).toEqual([]);
  });

  it('stagnant and one-family wait out the plateau grace: a healthy run starts on the constants plateau', () => {
    // Flat at success 0.27, writing bare constants: the plateau every default run starts on.
    const plateau = (n: number): DoctorSeries => ({
      steps: run({ reward: () => 0.35, success: () => 0.27 }, n),
      programs: programs(['3', '5', '4', '7', '1', '2']),
    });
    expect(ids(plateau(400), { doctor: { plateauGrace: 401 } })).toEqual([]);
    expect(ids(plateau(400), { doctor: { plateauGrace: 400 } })).toEqual(['one-family', 'stagnant']);
    // The default grace is past the 400 versions these synthetic runs have.
    expect(ids(plateau(400))).toEqual([]);
  });
});

describe('the fitted change', () => {
  it('is the least-squares slope times the span', () => {
    expect(fittedChange([1, 2, 3, 4].map((x) => ({ x, y: 2 * x + 1 })))).toBeCloseTo(6);
    expect(fittedChange([{ x: 1, y: 5 }])).toBe(0);
  });
});

describe('the doctor over a run, step by step', () => {
  const stepByStep = (
    steps: StepReport[],
    clearAfter: number,
    extra: (v: number) => Partial<DoctorSeries> = () => ({}),
  ) => {
    const tracker = new DoctorTracker(clearAfter);
    const c = config();
    for (let i = 1; i <= steps.length; i++) {
      const version = steps[i - 1]?.version as number;
      tracker.update(diagnose({ steps: steps.slice(0, i), ...extra(version) }, c), version);
    }
    return tracker;
  };

  it('fires at the version its rule first holds and withdraws the finding once it clears', () => {
    // Spikes at 100, 105, 110: the third fires it; the window of 50 drops the first at 150.
    const spiky = run({ metrics: (v) => ([100, 105, 110].includes(v) ? { gradNorm: 12 } : {}) }, 200);
    const t = stepByStep(spiky, 5);
    expect(t.history).toEqual([
      expect.objectContaining({ id: 'grad-spikes', firedAt: 110, withdrawnAt: 154 }),
    ]);
    expect(t.current).toEqual([]);
  });

  it('keeps a finding standing through fewer quiet diagnoses than clearAfter', () => {
    const tracker = new DoctorTracker(3);
    const [f] = diagnose({ steps: run({}, 5), refused: [5] }, config());
    if (!f) throw new Error('no finding');
    expect(tracker.update([f], 5)).toEqual({ fired: ['non-finite'], withdrawn: [] });
    expect(tracker.update([], 6)).toEqual({ fired: [], withdrawn: [] });
    expect(tracker.update([f], 7)).toEqual({ fired: [], withdrawn: [] }); // back: the count starts again
    tracker.update([], 8);
    tracker.update([], 9);
    expect(tracker.current.map((x) => x.id)).toEqual(['non-finite']);
    expect(tracker.update([], 10)).toEqual({ fired: [], withdrawn: ['non-finite'] });
    expect(tracker.update([{ ...f, version: 12 }], 12).fired).toEqual(['non-finite']);
    expect(tracker.history.map((r) => [r.firedAt, r.withdrawnAt])).toEqual([
      [5, 10],
      [12, null],
    ]);
  });

  it('lists standing findings most serious first and keeps a bounded history', () => {
    const tracker = new DoctorTracker(1);
    const steps = run({ metrics: () => ({ approxKl: 0.2 }) });
    const found = diagnose({ steps, refused: [N] }, config());
    tracker.update([...found].reverse(), N);
    expect(tracker.current.map((f) => f.id)).toEqual(['non-finite', 'steps-too-large']);
    for (let v = 0; v < HISTORY_KEPT; v++) {
      tracker.update(found, N + 2 * v + 1);
      tracker.update([], N + 2 * v + 2);
    }
    expect(tracker.history).toHaveLength(HISTORY_KEPT);
    tracker.reset();
    expect([tracker.current, tracker.history]).toEqual([[], []]);
  });
});
