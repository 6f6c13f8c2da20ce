/**
 * The training doctor (pure): detectors over a run's recorded series, each a rule with its
 * threshold and window in the run config's `doctor` group. `diagnose` reads the series as they
 * stand and returns what is wrong now; a finding absent from the next diagnosis has cleared
 * (`DoctorTracker` keeps when each fired and was withdrawn). Rules after seed 001's
 * `diagnose_training_issues`: a fitted trend, the loss's spread, the success rate's level.
 */
import type { DoctorConfig } from '../config/doctor-config';
import type { RunConfig } from '../config/run-config';
import type { CurriculumView } from '../env/curriculum';
import type { EvalPoint, StepReport } from '../pipeline/types';

/** The detectors, in the order their findings are listed. */
export const DETECTOR_IDS = [
  'non-finite',
  'falling',
  'value-diverging',
  'entropy-collapse',
  'echo-trap',
  'one-family',
  'grad-spikes',
  'loss-volatile',
  'steps-too-large',
  'too-stale',
  'stagnant',
  'saturated',
] as const;
export type DetectorId = (typeof DETECTOR_IDS)[number];

/** `critical`: the run is losing what it learned or cannot go on; `info`: nothing is wrong, something could be better. */
export type Severity = 'critical' | 'warning' | 'info';

/** One number a finding rests on, with what it is. */
export interface Evidence {
  name: string;
  value: number;
}

/** What a detector found: which rule, how bad, when, the numbers, what it means and what to change. */
export interface Finding {
  id: DetectorId;
  severity: Severity;
  /** The newest version the rule read when it fired. */
  version: number;
  title: string;
  evidence: Evidence[];
  meaning: string;
  advice: string;
}

/** A program the policy wrote (an episode's last turn) and the newest version that wrote it. */
export interface ProgramWritten {
  version: number;
  program: string;
}

/** The recorded series the doctor reads; all but the steps may be missing. */
export interface DoctorSeries {
  /** Every trained step, oldest first (a thinned history reads the same: windows count versions). */
  steps: readonly StepReport[];
  /** Greedy evaluations, oldest first. */
  evals?: readonly EvalPoint[];
  /** The newest programs written, oldest first. */
  programs?: readonly ProgramWritten[];
  /** Versions from which a step was refused: its loss or gradient was not finite. */
  refused?: readonly number[];
  /** Versions at which the curriculum moved to a harder level: success drops there by design. */
  promotedAt?: readonly number[];
  /** Where the curriculum stands, for what the saturation finding advises. */
  curriculum?: Pick<CurriculumView, 'enabled' | 'level' | 'next'>;
}

/** What the doctor reads of a run's config: its thresholds, and the settings its advice names. */
export type DoctorSettings = Pick<
  RunConfig,
  'doctor' | 'learner' | 'pipeline' | 'task' | 'policy' | 'hindsight'
>;

/** The findings of the series as they stand, in `DETECTOR_IDS` order; empty when all is well. */
export function diagnose(series: DoctorSeries, config: DoctorSettings): Finding[] {
  const steps = series.steps;
  const last = steps.at(-1);
  const refused = refusedFinding(series, config);
  if (!last || last.version - (steps[0]?.version ?? 0) + 1 < config.doctor.warmup)
    return refused ? [refused] : [];
  const ctx: Context = { series, config, d: config.doctor, last: last.version, since: lastPromotion(series) };
  const found = [refused, ...DETECTORS.map((detect) => detect(ctx))];
  return found.filter((f): f is Finding => f !== null);
}

/** What each detector reads. */
interface Context {
  series: DoctorSeries;
  config: DoctorSettings;
  d: DoctorConfig;
  /** The newest version trained. */
  last: number;
  /** The newest promotion's version (−Infinity: none): level-bound rules read only what follows. */
  since: number;
}

type Detector = (ctx: Context) => Finding | null;

// --- Series helpers ----------------------------------------------------------------------------

const mean = (xs: readonly number[]): number => xs.reduce((a, x) => a + x, 0) / xs.length;
const finite = (xs: readonly number[]): number[] => xs.filter(Number.isFinite);

function std(xs: readonly number[]): number {
  const m = mean(xs);
  return Math.sqrt(mean(xs.map((x) => (x - m) ** 2)));
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The change over the points' span of the least-squares line through them (slope × span). */
export function fittedChange(points: readonly { x: number; y: number }[]): number {
  if (points.length < 2) return 0;
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  let sxy = 0;
  let sxx = 0;
  for (const p of points) [sxy, sxx] = [sxy + (p.x - mx) * (p.y - my), sxx + (p.x - mx) ** 2];
  if (sxx === 0) return 0;
  const span = (points.at(-1) as { x: number }).x - (points[0] as { x: number }).x;
  return (sxy / sxx) * span;
}

/**
 * The steps of the last `window` versions, or null unless the series (after `from`) covers the
 * whole window: a rule never judges a window it has only part of.
 */
function windowOf(ctx: Context, window: number, from = -Infinity): StepReport[] | null {
  const steps = ctx.series.steps.filter((s) => s.version > from);
  const first = steps[0];
  if (!first || ctx.last - first.version + 1 < window) return null;
  return steps.filter((s) => s.version > ctx.last - window);
}

/**
 * Means of `value` over consecutive windows of `window` versions, newest last, each with at least
 * one finite value; the newest ends at the last version, and only whole windows after `from` count.
 */
function windowMeans(
  ctx: Context,
  window: number,
  value: (s: StepReport) => number | undefined,
  from = -Infinity,
): number[] {
  const steps = ctx.series.steps.filter((s) => s.version > from);
  const first = steps[0];
  if (!first) return [];
  const count = Math.floor((ctx.last - first.version + 1) / window);
  const sums = new Array<number>(count).fill(0);
  const ns = new Array<number>(count).fill(0);
  for (const s of steps) {
    const k = count - 1 - Math.floor((ctx.last - s.version) / window);
    const v = value(s);
    if (k < 0 || v === undefined || !Number.isFinite(v)) continue;
    [sums[k], ns[k]] = [(sums[k] as number) + v, (ns[k] as number) + 1];
  }
  return sums.flatMap((sum, k) => ((ns[k] as number) > 0 ? [sum / (ns[k] as number)] : []));
}

function lastPromotion(series: DoctorSeries): number {
  const at = series.promotedAt ?? [];
  return at.length ? Math.max(...at) : -Infinity;
}

/** Mean sampled success over the saturation window after the newest promotion, or null without one. */
function recentSuccess(ctx: Context): number | null {
  const w = ctx.series.steps.filter(
    (s) => s.version > Math.max(ctx.since, ctx.last - ctx.d.saturationWindow),
  );
  return w.length ? mean(w.map((s) => s.success)) : null;
}

/** Whether the policy solves (nearly) everything it plays: a converged policy may be sharp and uniform. */
const saturated = (ctx: Context): boolean => (recentSuccess(ctx) ?? 0) >= ctx.d.saturatedAt;

const round = (x: number, digits = 3): number => Number(x.toPrecision(digits));
const pct = (x: number): string => `${Math.round(x * 100)} %`;

/** A finding at `version`, its evidence rounded to 3 significant digits. */
function finding(
  version: number,
  f: Omit<Finding, 'version' | 'evidence'> & { evidence: Record<string, number> },
): Finding {
  const evidence = Object.entries(f.evidence).map(([name, value]) => ({ name, value: round(value) }));
  return { ...f, version, evidence };
}

// --- The detectors -------------------------------------------------------------------------------

/** A step refused (non-finite loss or gradient), or a non-finite metric recorded, in the spike window. */
function refusedFinding(series: DoctorSeries, config: DoctorSettings): Finding | null {
  const last = Math.max(series.steps.at(-1)?.version ?? 0, ...(series.refused ?? []));
  const from = last - config.doctor.spikeWindow;
  const refused = (series.refused ?? []).filter((v) => v > from);
  const bad = series.steps.filter(
    (s) =>
      s.version > from &&
      ![s.metrics.loss, s.metrics.gradNorm, s.metrics.entropy, s.metrics.valueLoss].every(Number.isFinite),
  );
  if (refused.length === 0 && bad.length === 0) return null;
  const at = Math.max(...refused, ...bad.map((s) => s.version));
  return finding(at, {
    id: 'non-finite',
    severity: 'critical',
    title: 'A step was not finite',
    evidence: {
      'steps refused': refused.length,
      'steps with a non-finite metric': bad.length,
      'at version': at,
    },
    meaning:
      'The loss or the gradient became NaN or infinite: the step was not applied (Adam would have turned every weight into NaN), and the run stops there.',
    advice: `Lower the learning rate (learner.learningRate, now ${config.learner.learningRate}) and keep the gradient clip on (learner.maxGradNorm, now ${config.learner.maxGradNorm}); resume from the last stored version or start again.`,
  });
}

/** Mean return or sampled success fell by more than its threshold over the trend window (fitted line). */
const falling: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.trendWindow, ctx.since);
  if (!w || w.length < 10) return null;
  const dReturn = fittedChange(w.map((s) => ({ x: s.version, y: s.meanReturn })));
  const dSuccess = fittedChange(w.map((s) => ({ x: s.version, y: s.success })));
  if (!(dReturn < -ctx.d.fallingReturn || dSuccess < -ctx.d.fallingSuccess)) return null;
  const { learningRate, loss } = ctx.config.learner;
  return finding(ctx.last, {
    id: 'falling',
    severity: 'critical',
    title: 'Reward is falling',
    evidence: {
      [`reward change over ${ctx.d.trendWindow} versions`]: dReturn,
      [`success change over ${ctx.d.trendWindow} versions`]: dSuccess,
    },
    meaning:
      'The policy is getting worse at what it had learned: its updates now undo more than they add, often because each step is too large or trains on samples that are too stale.',
    advice: `Lower the learning rate (learner.learningRate, now ${learningRate}) or let it decay sooner (learner.lrHalfLife); ${loss === 'ppo' ? 'switch to the decoupled loss (learner.loss) or lower η' : 'lower η (pipeline.eta)'}; see any step-size, staleness or entropy finding beside this one.`,
  });
};

/** The value loss's newest window is more than `valueGrowth` × its lowest earlier window. */
const valueDiverging: Detector = (ctx) => {
  const means = windowMeans(ctx, ctx.d.valueWindow, (s) => s.metrics.valueLoss);
  const now = means.at(-1);
  if (now === undefined || means.length < 2) return null;
  const lowest = Math.min(...means.slice(0, -1));
  // A value head that once fit a constant return near perfectly is not the baseline to grow from.
  if (!(now > ctx.d.valueGrowth * Math.max(lowest, VALUE_LOSS_FLOOR))) return null;
  const gae = ctx.config.learner.estimator === 'gae';
  return finding(ctx.last, {
    id: 'value-diverging',
    severity: gae ? 'critical' : 'warning',
    title: 'Value loss is diverging',
    evidence: {
      'value loss now': now,
      'lowest earlier': lowest,
      ratio: now / Math.max(lowest, VALUE_LOSS_FLOOR),
    },
    meaning: gae
      ? 'The value head predicts the return worse and worse, and with GAE the advantages come from it: the policy is pushed by noise.'
      : 'The value head predicts the return worse and worse. The advantages do not use it (group baseline), but its gradient reaches the layers the policy shares.',
    advice: `Lower the value weight (learner.valueCoef, now ${ctx.config.learner.valueCoef}) or the learning rate (now ${ctx.config.learner.learningRate})${gae ? '; or use a group baseline (learner.estimator rloo)' : ''}.`,
  });
};

/** Below this a value loss is a near-perfect fit, not a baseline to measure growth from. */
const VALUE_LOSS_FLOOR = 0.01;

/** Entropy now below `entropyFloor` × the run's early entropy, success short of saturated. */
const entropyCollapse: Detector = (ctx) => {
  const steps = ctx.series.steps;
  const first = steps[0];
  const w = windowOf(ctx, 2 * ctx.d.entropyWindow);
  if (!first || !w) return null;
  const early = finite(
    steps.filter((s) => s.version < first.version + ctx.d.entropyWindow).map((s) => s.metrics.entropy),
  );
  const now = finite(
    w.filter((s) => s.version > ctx.last - ctx.d.entropyWindow).map((s) => s.metrics.entropy),
  );
  if (!early.length || !now.length || saturated(ctx)) return null;
  const [e0, e1] = [mean(early), mean(now)];
  if (!(e0 > 0 && e1 < ctx.d.entropyFloor * e0)) return null;
  const { entropyCoef, learningRate } = ctx.config.learner;
  return finding(ctx.last, {
    id: 'entropy-collapse',
    severity: 'warning',
    title: 'Entropy has collapsed',
    evidence: { 'entropy early': e0, 'entropy now': e1, 'success now': recentSuccess(ctx) ?? 0 },
    meaning:
      'The policy samples nearly the same tokens every time while it still fails often: it has stopped exploring, so it can no longer find the programs it is missing.',
    advice: `${entropyCoef === 0 ? 'The entropy bonus is off: turn it on' : 'Raise the entropy bonus'} (learner.entropyCoef, now ${entropyCoef}), sample warmer (policy.temperature, now ${ctx.config.policy.temperature}), or lower the learning rate (now ${learningRate}).`,
  });
};

/** Per-task reward spread (within groups) fell below `spreadDrop` × its highest earlier window. */
const echoTrap: Detector = (ctx) => {
  const means = windowMeans(ctx, ctx.d.spreadWindow, (s) => s.returnSpread, ctx.since);
  const now = means.at(-1);
  if (now === undefined || means.length < 2 || saturated(ctx)) return null;
  const peak = Math.max(...means.slice(0, -1));
  if (!(peak > MIN_SPREAD && now <= ctx.d.spreadDrop * peak)) return null;
  const { temperature } = ctx.config.policy;
  return finding(ctx.last, {
    id: 'echo-trap',
    severity: 'warning',
    title: 'Reward spread is shrinking',
    evidence: {
      'spread within tasks now': now,
      'highest earlier': peak,
      'success now': recentSuccess(ctx) ?? 0,
    },
    meaning:
      'The episodes of each task now nearly all earn the same reward, so the group-relative advantages are near zero and the policy learns from almost nothing. This echo trap comes before the mean reward falls.',
    advice: `Bring back variety: sample warmer (policy.temperature, now ${temperature}), raise the entropy bonus (learner.entropyCoef, now ${ctx.config.learner.entropyCoef}), play more episodes a task (learner.groupSize, now ${ctx.config.learner.groupSize}), or lower the learning rate.`,
  });
};

/** A spread this small is a group of equal returns from the start, not a spread that shrank. */
const MIN_SPREAD = 0.02;

/** Of the newest programs, a share of bare constants or of one program at its threshold, success short of saturated, past the plateau grace. */
const oneFamily: Detector = (ctx) => {
  const programs = (ctx.series.programs ?? []).slice(-ctx.d.programWindow);
  if (ctx.last < ctx.d.plateauGrace || programs.length < ctx.d.programWindow || saturated(ctx)) return null;
  const texts = programs.map((p) => p.program.trim());
  const constants = texts.filter((t) => !t.includes('x')).length / texts.length;
  const counts = new Map<string, number>();
  for (const t of texts) counts.set(t, (counts.get(t) ?? 0) + 1);
  const [top, topCount] = [...counts].reduce((a, b) => (b[1] > a[1] ? b : a));
  const same = topCount / texts.length;
  if (!(constants >= ctx.d.constantShare || same >= ctx.d.sameShare)) return null;
  const what =
    same >= ctx.d.sameShare
      ? `one program, ${top}, is ${pct(same)} of the last ${texts.length} written`
      : `${pct(constants)} of the last ${texts.length} programs are a bare constant (no x)`;
  return finding(ctx.last, {
    id: 'one-family',
    severity: 'warning',
    title: 'Stuck on one kind of program',
    evidence: {
      'share of bare constants': constants,
      'share of the commonest program': same,
      'programs read': texts.length,
    },
    meaning: `The policy writes the same kind of answer whatever the task: ${what}. A constant or a copied output earns partial reward on many tasks, and the policy has settled for it.`,
    advice: `Explore more (learner.entropyCoef, now ${ctx.config.learner.entropyCoef}; policy.temperature, now ${ctx.config.policy.temperature}); relabelled programs teach other families (hindsight.samplesPerBatch, now ${ctx.config.hindsight.samplesPerBatch}); or lower the partial credit a wrong constant earns (env.reward.closeness).`,
  });
};

/**
 * At least `spikeCount` gradient norms above `spikeFactor` × the window's median, short of
 * saturated: a policy that solves everything has gradients near zero, and ordinary ones stand out.
 */
const gradSpikes: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.spikeWindow);
  if (!w || saturated(ctx)) return null;
  const norms = finite(w.map((s) => s.metrics.gradNorm));
  if (norms.length < 3) return null;
  const med = median(norms);
  const spikes = norms.filter((n) => n > ctx.d.spikeFactor * med);
  if (spikes.length < ctx.d.spikeCount) return null;
  const clip = ctx.config.learner.maxGradNorm;
  return finding(ctx.last, {
    id: 'grad-spikes',
    severity: 'warning',
    title: 'Gradient spikes',
    evidence: { spikes: spikes.length, 'median norm': med, 'largest norm': Math.max(...spikes), clip },
    meaning: `${spikes.length} steps of the last ${ctx.d.spikeWindow} versions had a gradient ${ctx.d.spikeFactor}× the usual: a few tokens (a very stale one, a rare high advantage) pull far harder than the rest.`,
    advice:
      clip >= 1_000
        ? `The gradient clip is off (learner.maxGradNorm ${clip}): set it back near the usual norm (0.5–2), or lower the learning rate.`
        : `The clip (learner.maxGradNorm, now ${clip}) keeps each step bounded; if spikes go on, lower the learning rate (now ${ctx.config.learner.learningRate}) or the staleness (pipeline.eta).`,
  });
};

/** Standard deviation of the policy loss over the loss window above `lossStd`. */
const lossVolatile: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.lossWindow);
  if (!w) return null;
  const losses = finite(w.map((s) => s.metrics.pgLoss));
  if (losses.length < 3) return null;
  const sd = std(losses);
  if (!(sd > ctx.d.lossStd)) return null;
  const { learningRate, tasksPerBatch } = ctx.config.learner;
  return finding(ctx.last, {
    id: 'loss-volatile',
    severity: 'warning',
    title: 'Policy loss swings',
    evidence: { [`loss std over ${ctx.d.lossWindow} versions`]: sd, 'loss mean': mean(losses) },
    meaning:
      'The policy loss jumps from step to step: each batch pulls the policy somewhere else, so progress is noisy and can undo itself.',
    advice: `Lower the learning rate (learner.learningRate, now ${learningRate}) or train on more tasks a batch (learner.tasksPerBatch, now ${tasksPerBatch}).`,
  });
};

/** Mean approx-KL above `maxKl` or mean clipped share above `maxClipFrac` over the update window. */
const stepsTooLarge: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.updateWindow);
  if (!w) return null;
  const kls = finite(w.map((s) => s.metrics.approxKl));
  const clips = finite(w.map((s) => s.metrics.clipFrac));
  if (!kls.length || !clips.length) return null;
  const [kl, clipped] = [mean(kls), mean(clips)];
  if (!(kl > ctx.d.maxKl || clipped > ctx.d.maxClipFrac)) return null;
  const { learningRate, updatesPerBatch, loss } = ctx.config.learner;
  return finding(ctx.last, {
    id: 'steps-too-large',
    severity: 'warning',
    title: 'Updates are too large',
    evidence: {
      'approx KL': kl,
      'clipped share': clipped,
      'KL limit': ctx.d.maxKl,
      'clipped limit': ctx.d.maxClipFrac,
    },
    meaning:
      'Each update moves the policy far from the one that played the samples: PPO clips many tokens, which then teach nothing, and the trust region it relies on no longer holds.',
    advice: `Lower the learning rate (now ${learningRate}) or the steps per batch (learner.updatesPerBatch, now ${updatesPerBatch})${loss === 'ppo' ? '; with standard PPO stale samples are clipped too: lower η or use the decoupled loss' : ''}.`,
  });
};

/** Mean staleness above the loss's bound (standard PPO bears less), or decoupled PPO masking too much. */
const tooStale: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.updateWindow);
  if (!w) return null;
  const stale = mean(w.map((s) => (s.staleness.length ? mean(s.staleness) : 0)));
  const masked = finite(w.map((s) => s.metrics.maskedFrac));
  const maskedMean = masked.length ? mean(masked) : 0;
  const { loss } = ctx.config.learner;
  const ppo = loss === 'ppo';
  const fires = ppo ? stale > ctx.d.stalePpo : stale > ctx.d.staleDecoupled || maskedMean > ctx.d.maxMasked;
  if (!fires) return null;
  const eta = ctx.config.pipeline.eta;
  return finding(ctx.last, {
    id: 'too-stale',
    severity: 'warning',
    title: 'Samples too stale for the loss',
    evidence: {
      'mean staleness (versions)': stale,
      'masked share': maskedMean,
      bound: ppo ? ctx.d.stalePpo : ctx.d.staleDecoupled,
    },
    meaning: ppo
      ? 'Standard PPO clips against the policy that played each sample; samples this many versions old fall outside its trust region, and its unbounded ratio under a negative advantage can throw the policy off.'
      : 'Even the decoupled loss corrects staleness only so far: it masks tokens whose behaviour policy is too far from the proximal one, and those teach nothing.',
    advice: `Lower η (pipeline.eta, now ${Number.isFinite(eta) ? eta : '∞'})${ppo ? ' or use the decoupled loss (learner.loss decoupled)' : ''}; more rollout workers than the trainer can keep up with only age the samples.`,
  });
};

/** Mean return and sampled success both flat over the trend window (fitted line), success short of saturated, past the plateau grace. */
const stagnant: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.trendWindow, ctx.since);
  if (ctx.last < ctx.d.plateauGrace || !w || w.length < 10 || saturated(ctx)) return null;
  const dReturn = fittedChange(w.map((s) => ({ x: s.version, y: s.meanReturn })));
  const dSuccess = fittedChange(w.map((s) => ({ x: s.version, y: s.success })));
  if (!(Math.abs(dReturn) < ctx.d.stagnantReturn && Math.abs(dSuccess) < ctx.d.stagnantSuccess)) return null;
  const success = mean(w.map((s) => s.success));
  const { entropyCoef } = ctx.config.learner;
  return finding(ctx.last, {
    id: 'stagnant',
    severity: 'warning',
    title: 'Learning has stalled',
    evidence: {
      [`reward change over ${ctx.d.trendWindow} versions`]: dReturn,
      [`success change over ${ctx.d.trendWindow} versions`]: dSuccess,
      'mean success': success,
    },
    meaning:
      success < 0.2
        ? 'Neither reward nor success has moved for a while, and few episodes succeed: most groups earn the same, so there is little to learn from.'
        : 'Neither reward nor success has moved for a while: the policy keeps what it has but finds nothing new.',
    advice:
      success < 0.2
        ? 'Make success reachable: an easier level or the curriculum (task.curriculum), relabelled programs (hindsight.samplesPerBatch), or more partial credit (env.reward.closeness).'
        : `Explore more (learner.entropyCoef, now ${entropyCoef}; policy.temperature, now ${ctx.config.policy.temperature}); if the learning rate has decayed far (learner.lrHalfLife), a longer half-life.`,
  });
};

/** Sampled success at least `saturatedAt` over the saturation window: the level is too easy. */
const saturation: Detector = (ctx) => {
  const w = windowOf(ctx, ctx.d.saturationWindow, ctx.since);
  if (!w || !saturated(ctx)) return null;
  const greedy = ctx.series.evals?.at(-1)?.successTrain;
  const cur = ctx.series.curriculum;
  const { curriculum, level } = ctx.config.task;
  const advice =
    cur?.enabled && cur.next
      ? `The curriculum moves on at ${pct(curriculum.promoteAt)} of the level's tasks solved: lower task.curriculum.promoteAt to promote sooner.`
      : cur?.enabled || (curriculum.enabled && level === null)
        ? 'This is the hardest level the run has: stop here, or train on a suite of harder tasks (task.suite).'
        : `Move on: train on a harder level (task.level, now ${level ?? 'all'}) or turn the curriculum on (task.curriculum.enabled).`;
  return finding(ctx.last, {
    id: 'saturated',
    severity: 'info',
    title: 'The level is too easy',
    evidence: {
      [`success over ${ctx.d.saturationWindow} versions`]: recentSuccess(ctx) ?? 0,
      ...(greedy !== undefined ? { 'greedy success (training tasks)': greedy } : {}),
    },
    meaning:
      'The policy solves nearly every task it plays: the groups earn the same reward, so further steps teach little.',
    advice,
  });
};

const DETECTORS: readonly Detector[] = [
  falling,
  valueDiverging,
  entropyCollapse,
  echoTrap,
  oneFamily,
  gradSpikes,
  lossVolatile,
  stepsTooLarge,
  tooStale,
  stagnant,
  saturation,
];
