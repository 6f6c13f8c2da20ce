/**
 * Behaviour at a checkpoint (pure): the choices of the feed's "Play greedily" control (a stored
 * version of the run, one of its tasks grouped by split) and the played episode as a feed entry
 * marked with its version and split.
 */
import type { EvalSplit, EvalTask } from '../env/evaluate';
import { splitOf } from '../env/evaluate';
import { count } from '../plural';
import type { GreedyEpisode } from '../run/evaluations';
import { feedEpisodes, type FeedEpisode } from './program-feed';
import { taskName } from './task-name';

/** One task of the choice list: its id and how the list names it. */
export interface TaskChoice {
  id: string;
  label: string;
}

/** The tasks of one split, as an `<optgroup>`. */
export interface TaskGroup {
  split: EvalSplit;
  label: string;
  tasks: TaskChoice[];
}

const GROUP_LABELS: Record<EvalSplit, string> = {
  train: 'Training tasks',
  heldOut: 'Held-out tasks',
  generalisation: 'Generalisation tasks',
};

/** The run's tasks grouped by split (training, held-out, generalisation; empty groups left out), each in its order. */
export function taskGroups(tasks: readonly EvalTask[]): TaskGroup[] {
  const order: EvalSplit[] = ['train', 'heldOut', 'generalisation'];
  return order
    .map((split) => ({
      split,
      label: GROUP_LABELS[split],
      tasks: tasks
        .filter((t) => splitOf(t) === split)
        .map((t) => ({ id: t.id, label: `${taskName(t.id, t)} (${t.level})` })),
    }))
    .filter((g) => g.tasks.length > 0);
}

/** The stored versions to choose from, newest first, each labelled "v12". */
export function versionChoices(versions: readonly number[]): { version: number; label: string }[] {
  return [...new Set(versions)].sort((a, b) => b - a).map((version) => ({ version, label: `v${version}` }));
}

/** The first task of the held-out group, else the first task at all: what the control chooses first. */
export function defaultTask(groups: readonly TaskGroup[]): string {
  const held = groups.find((g) => g.split === 'heldOut');
  return (held ?? groups[0])?.tasks[0]?.id ?? '';
}

/**
 * A greedy episode of a stored version as a feed entry: its turns, programs, answers and result
 * like any episode's, keyed `greedy:<n>` (`n`: the page's count of plays) and marked with its
 * version and the task's split.
 */
export function replayEpisode(played: GreedyEpisode, n: number): FeedEpisode {
  const [episode] = feedEpisodes(
    { task: played.task },
    { jobId: -1, trajectories: [played.trajectory], seqs: [], turns: [played.turns] },
    'evaluator',
  );
  if (!episode) throw new Error('a greedy play returned no episode');
  return {
    ...episode,
    key: `greedy:${n}`,
    // The version played, even where no policy token was written (an empty episode).
    versions: episode.versions.length ? episode.versions : [played.version],
    replay: { version: played.version, split: splitOf(played.task) },
  };
}

/** What the control says once the episode is in the feed. */
export function playedSummary(e: FeedEpisode): string {
  const version = e.replay?.version ?? e.versions.at(-1) ?? 0;
  const reward = `${e.reward >= 0 ? '+' : '−'}${Math.abs(e.reward).toFixed(2)}`;
  return `v${version} on ${e.name}: ${e.solved ? 'solved' : 'not solved'}, reward ${reward}, ${count(e.turns.length, 'turn')}; shown at the top of the feed.`;
}
