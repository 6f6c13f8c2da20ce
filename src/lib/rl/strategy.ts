/**
 * Update strategies (seed 000 §2.4–2.5): which of the policy's tensors an update trains and at
 * what rate, from the run's `learner.strategy` (`learner-config.ts`). Pure decisions over names
 * and numbers; the trainer (`trainer.ts`) applies them (a tensor left out gets no gradient, no
 * step and no Adam moments).
 *   - performance statistics over a window of batches: current, trend, average, stability;
 *   - `adaptive`: the rate ×up on a rising trend, ×down on a falling one, within its clamp;
 *   - `frozen`, `selective`, `gradual`: the tensors that train;
 *   - `auto`: the seed's optimize_strategy, each switch with its reason.
 */
import type { Importance } from './importance';
import type { LearnerConfig, StrategyConfig, UpdateStrategy } from './learner-config';

/** A strategy an update runs under (`auto` runs one of these at a time). */
export type ActiveStrategy = Exclude<UpdateStrategy, 'auto'>;

/** Where a tensor sits in the transformer: the embeddings, block l, or the heads (final norm, heads). */
export type TensorLayer = 'embeddings' | 'heads' | number;

/**
 * The layer of a parameter (or a LoRA adapter, named after its matrix). With tied embeddings
 * tok_emb is the vocabulary head too; it stays with the embeddings (freezing those freezes it).
 */
export function layerOf(name: string): TensorLayer {
  if (name === 'tok_emb' || name === 'pos_emb') return 'embeddings';
  const block = /^h(\d+)\./.exec(name);
  return block ? Number(block[1]) : 'heads';
}

// ---- performance statistics (seed §2.5 get_performance_stats) -------------------------------

export interface PerformanceStats {
  /** Mean of the newest `span` samples (the seed's current performance at span 1). */
  current: number;
  /** `current` less the mean of the `span` samples before (0 until there are span + 1). */
  trend: number;
  /** Mean of the window. */
  average: number;
  /** 1 / (1 + std) of the window (the std counts from 3 samples, as the seed's). */
  stability: number;
  /** Samples in the window. */
  count: number;
}

const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);

/** The statistics of a window of performance samples (oldest first). */
export function performanceStats(window: readonly number[], span: number): PerformanceStats {
  const n = window.length;
  const s = Math.max(1, Math.floor(span));
  const newest = window.slice(Math.max(0, n - s));
  const before = window.slice(Math.max(0, n - 2 * s), Math.max(0, n - s));
  const current = mean(newest);
  const average = mean(window);
  const std = n >= 3 ? Math.sqrt(mean(window.map((x) => (x - average) ** 2))) : 0;
  return {
    current,
    trend: before.length > 0 ? current - mean(before) : 0,
    average,
    stability: 1 / (1 + std),
    count: n,
  };
}

// ---- adaptive: the rate follows the trend ------------------------------------------------------

/** The rate after one update under `adaptive`: ×up on a rising trend, ×down on a falling one, clamped. */
export function adaptRate(
  rate: number,
  trend: number,
  cfg: Pick<
    StrategyConfig,
    'adaptiveUp' | 'adaptiveDown' | 'adaptiveMinRate' | 'adaptiveMaxRate' | 'trendThreshold'
  >,
): number {
  const factor =
    trend > cfg.trendThreshold ? cfg.adaptiveUp : trend < -cfg.trendThreshold ? cfg.adaptiveDown : 1;
  return Math.min(cfg.adaptiveMaxRate, Math.max(cfg.adaptiveMinRate, rate * factor));
}

// ---- which tensors train -----------------------------------------------------------------------

/** `frozen`: the tensors of `names` that train (all but the embeddings, lowest blocks and heads chosen). */
export function frozenTrainable(
  names: readonly string[],
  cfg: Pick<StrategyConfig, 'freezeEmbeddings' | 'frozenBlocks' | 'freezeHeads'>,
): Set<string> {
  return new Set(
    names.filter((n) => {
      const layer = layerOf(n);
      if (layer === 'embeddings') return !cfg.freezeEmbeddings;
      if (layer === 'heads') return !cfg.freezeHeads;
      return layer >= cfg.frozenBlocks;
    }),
  );
}

/**
 * `gradual`: the tensors that train at `version`: the heads from the start, then one block more
 * every `every` versions from the top block down, then the embeddings.
 */
export function gradualTrainable(
  names: readonly string[],
  nLayers: number,
  version: number,
  every: number,
): Set<string> {
  const stage = Math.floor(Math.max(0, version) / Math.max(1, every)); // blocks unfrozen
  return new Set(
    names.filter((n) => {
      const layer = layerOf(n);
      if (layer === 'heads') return true;
      if (layer === 'embeddings') return stage > nLayers;
      return layer >= nLayers - stage;
    }),
  );
}

/** `selective`: the tensors whose importance is above `threshold` (one not measured does not train). */
export function selectiveTrainable(
  names: readonly string[],
  importance: ReadonlyMap<string, number>,
  threshold: number,
): Set<string> {
  return new Set(names.filter((n) => (importance.get(n) ?? 0) > threshold));
}

// ---- auto: the seed's optimize_strategy --------------------------------------------------------

/** A switch of `auto`'s strategy, with why. */
export interface StrategySwitch {
  /** The version the update that switched makes from. */
  version: number;
  from: ActiveStrategy;
  to: ActiveStrategy;
  reason: string;
}

/**
 * The seed's optimize_strategy: poor and falling (current < 0.5, trend < 0) goes to `selective`,
 * the conservative one; good and rising (current > 0.8, trend > 0), when stable enough, to
 * `adaptive`. Null when it stays.
 */
export function optimizeStrategy(
  active: ActiveStrategy,
  stats: PerformanceStats,
  minStability: number,
): { to: ActiveStrategy; reason: string } | null {
  const { current, trend, stability } = stats;
  const figures = `performance ${current.toFixed(2)}, trend ${trend.toFixed(3)}, stability ${stability.toFixed(2)}`;
  if (current < 0.5 && trend < 0 && active !== 'selective')
    return { to: 'selective', reason: `poor and falling (${figures}): train only the important tensors` };
  if (current > 0.8 && trend > 0 && stability >= minStability && active !== 'adaptive')
    return { to: 'adaptive', reason: `good and rising (${figures}): let the rate follow the trend` };
  return null;
}

// ---- the strategy over a run -------------------------------------------------------------------

/** What one update runs with. */
export interface UpdatePlan {
  strategy: ActiveStrategy;
  /** The rate of the update: the scheduled one, or `adaptive`'s. */
  rate: number;
  stats: PerformanceStats;
  /** `auto`'s switch at this update. */
  switched?: StrategySwitch;
}

/**
 * A run's strategy as it goes: the performance window, `auto`'s current strategy and
 * `adaptive`'s rate. Kept in memory (a resumed run starts them afresh).
 */
export class StrategyRunner {
  active: ActiveStrategy;
  /** `adaptive`'s rate; null until an update runs under it. */
  adaptiveRate: number | null = null;
  readonly switches: StrategySwitch[] = [];
  private window: number[] = [];

  constructor(readonly cfg: StrategyConfig & Pick<LearnerConfig, 'learningRate'>) {
    this.active = cfg.strategy === 'auto' ? 'full' : cfg.strategy;
  }

  /**
   * Plans the update that makes `version + 1`: records the batch's performance (when known),
   * switches under `auto`, and sets the rate (`scheduled`, or `adaptive`'s own).
   */
  plan(version: number, performance: number | undefined, scheduled: number): UpdatePlan {
    const cfg = this.cfg;
    const size = cfg.strategy === 'auto' ? cfg.autoWindow : Math.max(cfg.autoWindow, 2 * cfg.trendSpan);
    if (performance !== undefined && Number.isFinite(performance)) {
      this.window.push(performance);
      if (this.window.length > size) this.window.shift();
    }
    const stats = performanceStats(this.window, cfg.trendSpan);
    let switched: StrategySwitch | undefined;
    if (cfg.strategy === 'auto' && this.window.length >= cfg.autoWindow) {
      const next = optimizeStrategy(this.active, stats, cfg.autoMinStability);
      if (next) {
        switched = { version, from: this.active, ...next };
        this.switches.push(switched);
        this.active = next.to;
        // A fresh window: the next switch judges the new strategy on its own batches.
        this.window = [];
      }
    }
    let rate = scheduled;
    if (this.active === 'adaptive') {
      this.adaptiveRate =
        this.adaptiveRate === null
          ? Math.min(cfg.adaptiveMaxRate, Math.max(cfg.adaptiveMinRate, scheduled))
          : adaptRate(this.adaptiveRate, stats.trend, cfg);
      rate = this.adaptiveRate;
    }
    return { strategy: this.active, rate, stats, ...(switched ? { switched } : {}) };
  }

  /**
   * The tensors of `names` the update of `version` trains under `strategy`, or null for all of
   * them. `selective` needs `importance` (none yet: every tensor trains).
   */
  trainable(
    strategy: ActiveStrategy,
    names: readonly string[],
    nLayers: number,
    version: number,
    importance: Importance | null,
  ): Set<string> | null {
    const cfg = this.cfg;
    switch (strategy) {
      case 'frozen':
        return frozenTrainable(names, cfg);
      case 'gradual':
        return gradualTrainable(names, nLayers, version, cfg.gradualEvery);
      case 'selective':
        return importance ? selectiveTrainable(names, importance, cfg.selectiveThreshold) : null;
      default:
        return null;
    }
  }
}

/** What the strategy did at one update: the page's step report and timeline read it. */
export interface StrategyReport {
  /** The version the update makes from. */
  version: number;
  /** The strategy the update ran under (`auto`'s current one). */
  strategy: ActiveStrategy;
  /** The update's learning rate. */
  rate: number;
  /** Tensors the update trained, of `tensors` (parameters, or LoRA adapters). */
  tensorsTrained: number;
  tensors: number;
  performance: PerformanceStats;
  /** `auto` switched at this update. */
  switched?: StrategySwitch;
  /**
   * Per-tensor importance measured at this update (every `importanceEvery` versions), each
   * normalised to its largest: the seed's, and the gradient-based over the steps since the last.
   */
  importance?: { seed: Record<string, number>; gradient: Record<string, number> };
}
