/**
 * The parameter-importance heat map of the Figures view (DESIGN §5, §9): rows are the policy's
 * tensors grouped by where they sit (the embeddings, each block's attention and MLP, the heads),
 * columns the versions at which the trainer measured importance (every `learner.importanceEvery`
 * versions, `StepReport.strategy.importance`), a cell the tensor's importance at that version
 * under one of the two measures of `rl/importance.ts`, each already normalised to its largest.
 * Pure data shaping: which rows, which columns (thinned on a long run), the colour scale and the
 * words a screen reader gets.
 */
import type { StrategyReport } from '../rl/strategy';

/** The two measures of `rl/importance.ts`: the seed's formula (the default) and the gradient one. */
export type ImportanceMeasure = 'seed' | 'gradient';

export const IMPORTANCE_MEASURES: readonly { id: ImportanceMeasure; label: string; formula: string }[] = [
  { id: 'seed', label: "seed's", formula: '0.4·variance + 0.3·mean|w| + 0.3·‖w‖' },
  { id: 'gradient', label: 'gradient', formula: 'mean |Σ g·w| over the steps since the last measure' },
];

/** What the heat map reads of a step report (a `StepReport` fits). */
export interface ImportanceStep {
  version: number;
  strategy?: Pick<StrategyReport, 'importance'>;
}

/** At most this many columns: a longer run shows versions spread evenly over it, the newest kept. */
export const MAX_COLUMNS = 48;

/** One group of rows: the embeddings, block l's attention or MLP, or the heads. */
export interface HeatGroup {
  id: string;
  label: string;
  /** The tensors of the group, in the order the model lists them. */
  rows: string[];
}

export interface HeatMap {
  measure: ImportanceMeasure;
  /** The versions of the columns shown, ascending. */
  versions: number[];
  /** Versions measured in all (more than `versions.length` when thinned). */
  measured: number;
  groups: HeatGroup[];
  /**
   * The cells by tensor name, one per column: the importance in [0, 1], or null where the
   * tensor was not measured (the gradient measure skips a tensor left out of the updates).
   */
  cells: Map<string, (number | null)[]>;
}

/**
 * The group a tensor (or a LoRA adapter, named after its matrix) belongs to, with its place in
 * the order of the rows: the embeddings first, then each block's attention (with its layer
 * norm) and MLP (with its), then the heads (final norm, policy, value and copy heads).
 */
export function groupOf(name: string): { id: string; label: string; order: number } {
  if (name === 'tok_emb' || name === 'pos_emb') return { id: 'embeddings', label: 'Embeddings', order: 0 };
  const block = /^h(\d+)\.(\w+)/.exec(name);
  if (block) {
    const l = Number(block[1]);
    const mlp = block[2] === 'mlp' || block[2] === 'ln2';
    return mlp
      ? { id: `h${l}.mlp`, label: `Block ${l} · MLP`, order: 1 + 2 * l + 1 }
      : { id: `h${l}.attn`, label: `Block ${l} · attention`, order: 1 + 2 * l };
  }
  return { id: 'heads', label: 'Heads', order: Number.MAX_SAFE_INTEGER };
}

/** The steps that carry a measure of importance, one per version (the last report wins), ascending. */
export function measuredSteps<S extends ImportanceStep>(steps: readonly S[]): S[] {
  const byVersion = new Map<number, S>();
  for (const s of steps) if (s.strategy?.importance) byVersion.set(s.version, s);
  return [...byVersion.values()].sort((a, b) => a.version - b.version);
}

/**
 * At most `cap` of `items`, spread evenly from the first to the last (both kept), in order;
 * all of them when they fit.
 */
export function thinEvenly<T>(items: readonly T[], cap: number): T[] {
  const n = items.length;
  const k = Math.max(1, Math.floor(cap));
  if (n <= k) return [...items];
  if (k === 1) return items.slice(-1);
  const picks = new Set(Array.from({ length: k }, (_, i) => Math.round((i * (n - 1)) / (k - 1))));
  return [...picks].sort((a, b) => a - b).map((i) => items[i] as T);
}

/** The heat map of `measure` over the measured versions of `steps`, at most `cap` columns. */
export function importanceHeatMap(
  steps: readonly ImportanceStep[],
  measure: ImportanceMeasure = 'seed',
  cap = MAX_COLUMNS,
): HeatMap {
  const measured = measuredSteps(steps);
  const shown = thinEvenly(measured, cap);
  const records = shown.map((s) => s.strategy?.importance?.[measure] ?? {});
  // Every tensor any measure named, in the order first met (the model's), then grouped.
  const names: string[] = [];
  const seen = new Set<string>();
  for (const s of shown)
    for (const rec of [s.strategy?.importance?.seed, s.strategy?.importance?.gradient])
      for (const name of Object.keys(rec ?? {}))
        if (!seen.has(name)) {
          seen.add(name);
          names.push(name);
        }
  const groups = new Map<string, HeatGroup & { order: number }>();
  for (const name of names) {
    const g = groupOf(name);
    const group = groups.get(g.id) ?? { ...g, rows: [] };
    group.rows.push(name);
    groups.set(g.id, group);
  }
  const cells = new Map(
    names.map((name) => [
      name,
      records.map((rec) => {
        const v = rec[name];
        return v === undefined || !Number.isFinite(v) ? null : Math.min(1, Math.max(0, v));
      }),
    ]),
  );
  return {
    measure,
    versions: shown.map((s) => s.version),
    measured: measured.length,
    groups: [...groups.values()]
      .sort((a, b) => a.order - b.order)
      .map(({ id, label, rows }) => ({ id, label, rows })),
    cells,
  };
}

/** Colour stops of the scale (viridis, dark to bright): low importance dark, high bright. */
const STOPS: readonly (readonly [number, number, number])[] = [
  [68, 1, 84],
  [59, 82, 139],
  [33, 145, 140],
  [94, 201, 98],
  [253, 231, 37],
];

/** The colour of an importance in [0, 1] on the scale (`rgb(…)`). */
export function heatColor(v: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(v) ? v : 0)) * (STOPS.length - 1);
  const i = Math.min(STOPS.length - 2, Math.floor(x));
  const f = x - i;
  const a = STOPS[i] as readonly [number, number, number];
  const b = STOPS[i + 1] as readonly [number, number, number];
  const c = a.map((ai, k) => Math.round(ai + ((b[k] ?? ai) - ai) * f));
  return `rgb(${c.join(', ')})`;
}

/** The CSS gradient of the legend's bar, 0 at the left to 1 at the right. */
export function heatGradient(): string {
  return `linear-gradient(to right, ${STOPS.map((s) => `rgb(${s.join(', ')})`).join(', ')})`;
}

/** A cell's value as the page writes it ("0.27", "not measured"). */
export function cellText(v: number | null): string {
  return v === null ? 'not measured' : v.toFixed(2);
}

/**
 * The map in words for a screen reader: what is drawn, and at the newest version shown the
 * most and least important tensors (those measured).
 */
export function describeHeatMap(map: HeatMap): string {
  const label = IMPORTANCE_MEASURES.find((m) => m.id === map.measure)?.label ?? map.measure;
  const n = map.versions.length;
  if (n === 0) return 'No importance measured yet.';
  const tensors = map.groups.reduce((a, g) => a + g.rows.length, 0);
  const last = map.versions[n - 1] as number;
  const ranked = [...map.cells]
    .map(([name, row]) => [name, row[n - 1] ?? null] as const)
    .filter((r): r is readonly [string, number] => r[1] !== null)
    .sort((a, b) => b[1] - a[1]);
  const top = ranked
    .slice(0, 3)
    .map(([name, v]) => `${name} ${cellText(v)}`)
    .join(', ');
  const thinned = map.measured > n ? ` (${n} of ${map.measured} measured, spread evenly)` : '';
  const lowest = ranked.at(-1);
  return (
    `${label} importance of ${tensors} tensors at ${n} versions${thinned}, from ${map.versions[0]} to ${last}. ` +
    (top ? `At version ${last} the most important: ${top}` : `Nothing measured at version ${last}`) +
    (lowest && ranked.length > 3 ? `; the least: ${lowest[0]} ${cellText(lowest[1])}.` : '.')
  );
}
