import type { Level, TaskKind } from '../env/suite';
import { DEFAULT_LEARNER } from '../rl/learner-config';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { DEFAULT_HINDSIGHT } from '../rl/hindsight';
import {
  defaultRunConfig,
  withOverrides,
  withTaskKind,
  type RunConfig,
  type RunOverrides,
} from './run-config';

/**
 * Presets for teaching (DESIGN §9): each sets the knobs an experiment is about — η, the policy
 * loss, when workers adopt new weights, the curriculum, the kind of task — and says what to watch.
 * Every preset sets all five and differs from the asynchronous one in one of them (standard PPO
 * from its decoupled twin), so that a comparison changes one thing; the rest of the settings
 * (workers, seed, LoRA, …) stay as they are.
 */
export interface Preset {
  id: string;
  label: string;
  /** What the run shows, and where on the page to look. */
  watch: string;
  knobs: {
    eta: number;
    loss: RunConfig['learner']['loss'];
    interruptEveryTokens: number;
    curriculum: boolean;
    /** The built-in tasks trained and evaluated on (DESIGN §3.1). */
    taskKind: TaskKind;
  };
  /** What the preset sets past its knobs (a start point, the environment); not part of telling presets apart. */
  config?: RunOverrides;
}

export const PRESETS: readonly Preset[] = [
  {
    id: 'async',
    label: 'asynchronous, as AReaL (η = 4, decoupled PPO)',
    watch:
      'Several policy versions are in flight at once on the timeline; workers adopt each new version at the next token (interrupts); the trainer waits for data less than in the synchronous preset. Compare episodes trained / s and trainer busy with it.',
    knobs: { eta: 4, loss: 'decoupled', interruptEveryTokens: 1, curriculum: true, taskKind: 'examples' },
  },
  {
    id: 'sync',
    label: 'synchronous baseline (η = 0)',
    watch:
      'Rollout and training spans never overlap on the timeline: the trainer waits for every batch (trainer busy well under 100 %) and the bottleneck advisor says why. Compare episodes trained / s with the asynchronous preset.',
    knobs: { eta: 0, loss: 'decoupled', interruptEveryTokens: 1, curriculum: true, taskKind: 'examples' },
  },
  {
    id: 'stale-ppo',
    label: 'unbounded staleness, standard PPO',
    watch:
      'With no bound on η rollouts may run any number of versions ahead; how far depends on how much faster the workers play than the trainer trains (with the default one worker, about 1.5 versions on average: add workers to spread the staleness histogram). Standard PPO takes each ratio to the sample’s old behaviour policy: stale tokens already past 1 ± ε give no gradient (the clip fraction). Compare the success charts with the decoupled preset below, whose clip fraction is 0 by construction with one update per batch (set "updates / batch" to 2 to see its clip act).',
    knobs: { eta: Infinity, loss: 'ppo', interruptEveryTokens: 1, curriculum: true, taskKind: 'examples' },
  },
  {
    id: 'stale-decoupled',
    label: 'unbounded staleness, decoupled PPO',
    watch:
      'The same stale samples, corrected: each token weighted by w = π_prox / π_behav, those above the cap masked. The lag chart (KL(π_behav ‖ π_prox)), w max and the masked share show how far behind each batch is; mean w stays near 1 however stale.',
    knobs: {
      eta: Infinity,
      loss: 'decoupled',
      interruptEveryTokens: 1,
      curriculum: true,
      taskKind: 'examples',
    },
  },
  {
    id: 'turn-boundaries',
    label: 'adopt new weights at turn boundaries only',
    watch:
      'A worker takes a new version only at a moment when one of its episodes is between turns (its other episodes then switch mid-turn): adoption waits longer (adopt p95), and more of each episode is written by an older version. Compare with the asynchronous preset.',
    knobs: { eta: 4, loss: 'decoupled', interruptEveryTokens: 0, curriculum: true, taskKind: 'examples' },
  },
  {
    id: 'no-curriculum',
    label: 'curriculum off (every level at once)',
    watch:
      'Jobs draw from easy, medium and hard tasks alike (the curriculum line says off). Compare success per batch with the curriculum, which starts on easy and promotes once the level’s tasks, each over its last 20 episodes, succeed 70 % of the time on average.',
    knobs: { eta: 4, loss: 'decoupled', interruptEveryTokens: 1, curriculum: false, taskKind: 'examples' },
  },
  {
    id: 'tooluse',
    label: 'Learn to use the sandbox (tool use)',
    watch:
      'Each task shows one example, which several programs fit; <run> runs the program on the task’s tests and answers with a report (pass 5 of 8 and the failing tests). In the program feed, open episodes that ran: read the report under a turn, then see whether the next turn revised the program towards the failing tests. Ticks on the episode bars of the timeline mark each sandbox call. Compare greedy success with the asynchronous preset, whose tasks show enough examples to write the program at once.',
    knobs: { eta: 4, loss: 'decoupled', interruptEveryTokens: 1, curriculum: true, taskKind: 'tooluse' },
    // From the built-in revising base with the copy head (it revises more often than the stock
    // one), whose first program the environment runs (as it was taught), at a tenth of the
    // default learning rate: at 3e-3 a base's held-out success falls within 25 versions.
    config: {
      policy: { startFrom: { base: 'tooluse-revise-copy' } },
      env: { autoRun: true },
      learner: { learningRate: 3e-4 },
    },
  },
];

/**
 * The hindsight settings of `settings` switched to `kind`'s tasks: tool use turns relabelling off
 * (`withTaskKind`); back on the examples kind, relabelling takes its defaults again.
 */
function hindsightFor(settings: RunConfig, kind: TaskKind): RunConfig['hindsight'] {
  const h = settings.hindsight;
  if (kind !== 'examples' || settings.task.kind === 'examples') return h;
  const { samplesPerBatch, taskFraction } = DEFAULT_HINDSIGHT;
  return { ...h, samplesPerBatch, taskFraction };
}

/**
 * `settings` on `kind`'s tasks: a change of kind brings that kind's environment (turns, rewards)
 * and hindsight settings; the same kind leaves them as they are.
 */
export function switchTaskKind(settings: RunConfig, kind: TaskKind): RunConfig {
  if (settings.task.kind === kind) return settings;
  return withTaskKind({ ...settings, hindsight: hindsightFor(settings, kind) }, kind);
}

/** `settings` with the preset's knobs set (a new object; `settings` is left as it is). */
export function applyPreset(settings: RunConfig, preset: Preset): RunConfig {
  const { eta, loss, interruptEveryTokens, curriculum, taskKind } = preset.knobs;
  const kinded = switchTaskKind(settings, taskKind);
  const from = kinded.policy.startFrom;
  // Leaving a preset with a config (its knobs still set, or its base still chosen): what that
  // config set goes back to the defaults.
  const current = presetOf(settings);
  const left = PRESETS.filter((p) => {
    const base = p.config?.policy?.startFrom;
    const baseKept = from !== null && 'base' in from && !!base && 'base' in base && base.base === from.base;
    return p.config !== undefined && (p === current || baseKept);
  });
  const undone = left.reduce((c, p) => withOverrides(c, defaultsOf(p.config ?? {})), kinded);
  const knobbed = withOverrides(undone, {
    pipeline: { eta, playLag: 0, interruptEveryTokens },
    learner: { loss },
    task: { curriculum: { enabled: curriculum } },
  });
  return preset.config ? withOverrides(knobbed, preset.config) : knobbed;
}

/** The default values of the fields `config` sets (a start point's default being none). */
function defaultsOf(config: RunOverrides): RunOverrides {
  const walk = (over: Record<string, unknown>, defaults: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(over).map(([k, v]) => {
        const d = defaults[k];
        const nested = typeof d === 'object' && d !== null && typeof v === 'object' && v !== null;
        return [k, nested ? walk(v as Record<string, unknown>, d as Record<string, unknown>) : d];
      }),
    );
  return walk(
    config as Record<string, unknown>,
    defaultRunConfig() as unknown as Record<string, unknown>,
  ) as RunOverrides;
}

/** The preset whose knobs `settings` have, or null when they match none. */
export function presetOf(settings: RunConfig): Preset | null {
  return (
    PRESETS.find(
      (p) =>
        p.knobs.eta === settings.pipeline.eta &&
        settings.pipeline.playLag === 0 &&
        p.knobs.loss === settings.learner.loss &&
        p.knobs.interruptEveryTokens === settings.pipeline.interruptEveryTokens &&
        p.knobs.curriculum === settings.task.curriculum.enabled &&
        p.knobs.taskKind === settings.task.kind,
    ) ?? null
  );
}

/** What every leg of a sweep sets past its η and loss (the rest: the panel's settings). */
export interface SweepLegSettings {
  /** Staleness held at η (`pipeline.playLag`: synchronous, the workers η versions behind), not bounded by it. */
  fixedLag?: boolean;
  /** What the legs set past the panel's config (optimiser steps, hindsight, start point, tasks). */
  config?: RunOverrides;
  /** Train and evaluate on this level only. */
  level?: Level;
  /**
   * Evaluate every this many versions as the leg trains, and read its success as the mean over its
   * last quarter (greedy answers flip from one version to the next); absent: its last version's.
   */
  evalEvery?: number;
}

/**
 * A preset that runs a comparison rather than one run: Train runs its legs, each a run of its own
 * with the rest of the settings as they are, and the first screen draws them as they finish.
 */
export interface ComparisonPreset {
  id: string;
  label: string;
  watch: string;
  /** The comparison Train runs: the staleness sweep (each η with both losses). */
  runs: 'sweep';
  /**
   * The sweep's η values, the episodes each leg trains on, what every leg sets, and the seeds each
   * cell (η, loss) runs with: one leg per seed, the cell drawn as their mean ± sd.
   */
  sweep: { etas: readonly number[]; samples: number; legs: SweepLegSettings; seeds: readonly number[] };
}

/**
 * The staleness preset's legs: staleness held at η, from the built-in base (past the constant
 * programs, as AReaL starts from a pre-trained model), four optimiser steps per batch, 16 relabelled
 * rows and the gradient clip off, on the easy level: the setting where standard PPO's unbounded
 * w·A on stale tokens upsets it while decoupled PPO holds (docs/experiments.md, "Staleness sweep").
 */
export const STALENESS_LEGS: SweepLegSettings = {
  fixedLag: true,
  level: 'easy',
  evalEvery: 25,
  // From the built-in base on the built-in examples tasks, whatever the panel has; each leg keeps
  // the largest η + 1 versions, so that a worker joining late still plays η back.
  config: {
    learner: {
      tasksPerBatch: DEFAULT_LEARNER.tasksPerBatch,
      groupSize: DEFAULT_LEARNER.groupSize,
      updatesPerBatch: 4,
      maxGradNorm: 1000,
    },
    env: DEFAULT_ENV_CONFIG,
    hindsight: { ...DEFAULT_HINDSIGHT, samplesPerBatch: 16 },
    policy: { lora: null, startFrom: { base: 'easy-half' } },
    task: { suite: null, kind: 'examples' },
    storage: { keepVersions: 33 },
  },
};

export const COMPARISON_PRESETS: readonly ComparisonPreset[] = [
  {
    id: 'staleness-sweep',
    label: 'Staleness: PPO vs decoupled (a sweep, 3 seeds a cell, ~20 min)',
    watch:
      'Four cells, each run with seeds 1, 2 and 3 (twelve runs, one after another; the time they take is shown before Train), from the built-in base (a policy trained on the easy level until it solved half its training tasks, as AReaL starts from a pre-trained model), η = 0 and 32, each with standard PPO and with decoupled PPO, 200 versions (3 200 episodes, 1–2 min) each. Staleness is held at η: rollout and training alternate, and the workers play the weights η versions back, so every batch is η versions old, as in AReaL once its rollouts run ahead. Each run takes four optimiser steps per batch with 16 relabelled rows, and the gradient clip is off. The chart in place of the success chart draws each cell’s greedy success (each run’s mean over its last quarter; the cell’s mean over its seeds, ±1 sd) against η as its runs end; under it, the lag: standard PPO’s clipped tokens (ratio to π_behav past 1 ± ε), decoupled PPO’s lag KL(π_behav ‖ π_prox) and masked share (w over the cap). On a stale token whose probability has grown since it was played, standard PPO’s ratio to π_behav is unbounded under a negative advantage: gradient spikes (norms up to ~500 in the grid) knock its policy back; decoupled PPO masks those tokens and clips around π_prox. Over ten seeds in node, after 200 versions, η = 32: standard PPO 0.72 ± 0.09, decoupled PPO 0.83 ± 0.06; η = 0: 0.89 and 0.89 (after 300 versions 0.82 against 0.92; given 450, standard PPO climbs back to within 0.05: the lag slows it and knocks it back, it does not stop it). Hence three seeds a cell: one seed a point says little (at η = 0 the two losses make the same update, yet two runs of one seed can part by 0.18), and three still leave wide bands (docs/experiments.md).',
    runs: 'sweep',
    sweep: { etas: [0, 32], samples: 3200, legs: STALENESS_LEGS, seeds: [1, 2, 3] },
  },
];
