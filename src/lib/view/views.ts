/**
 * The page's views and their place in the URL: the hash names the view (`#train`, `#runs`, …),
 * so a link opens the same view and the browser's back and forward move between views.
 */

/** One view of the page: its hash, its navigation label, and what it holds (the link's tooltip). */
export interface ViewEntry {
  readonly id: string;
  readonly label: string;
  readonly holds: string;
}

export const VIEWS = [
  { id: 'train', label: 'Train', holds: 'pick a preset, train, and watch the pipeline and the programs' },
  {
    id: 'figures',
    label: 'Figures',
    holds: "the pipeline's dashboard, the bottleneck advisor, the learning charts and the timeline events",
  },
  { id: 'runs', label: 'Runs', holds: 'stored runs, the sync-vs-async race, the η sweep and share links' },
  { id: 'advanced', label: 'Settings', holds: 'every setting of a new run, with what each one means' },
  { id: 'tasks', label: 'Tasks', holds: 'task suites, the evaluation table and the task editor' },
  { id: 'custom', label: 'Custom env', holds: 'train a policy on an environment written in JavaScript' },
  { id: 'sandbox', label: 'Sandbox', holds: 'run a program in QuickJS or WebContainer' },
  { id: 'trainer', label: 'Trainer check', holds: 'one gradient step at a time, save and load the weights' },
] as const satisfies readonly ViewEntry[];

/** The id of a view. */
export type ViewId = (typeof VIEWS)[number]['id'];

/** The view an empty or unknown hash opens: the first screen. */
export const DEFAULT_VIEW: ViewId = 'train';

/** Other names a hash may use for a view (older or more obvious ones). */
const ALIASES: Readonly<Record<string, ViewId>> = {
  settings: 'advanced',
  pipeline: 'figures',
  events: 'figures',
  env: 'custom',
  trainers: 'trainer',
};

const isView = (name: string): name is ViewId => VIEWS.some((v) => v.id === name);

/**
 * The view a URL hash names (`#runs`, `#/runs`, `runs`, any case and spaces, a `?…` or `/…` after it ignored);
 * the first screen for an empty or unknown hash.
 */
export function viewFromHash(hash: string): ViewId {
  const name = hash.replace(/^#\/?/, '').split(/[?&/]/)[0]?.trim().toLowerCase() ?? '';
  if (isView(name)) return name;
  return Object.hasOwn(ALIASES, name) ? (ALIASES[name] ?? DEFAULT_VIEW) : DEFAULT_VIEW;
}

/** The hash that opens `view`. */
export function hashOf(view: ViewId): string {
  return `#${view}`;
}
