import { parseTestReport } from '../env/test-report';
import { RUN, SEP, SUBMIT } from '../env/vocab';
import { rlooAdvantages } from './advantages';
import type { PerToken, Trajectory } from './trajectory';

/**
 * Per-turn credit for multi-turn episodes (estimator `turn`, DESIGN §5): each turn's program is
 * scored on its own tests — a run by the share of the task's tests its report passed, a submit by
 * the reward's pass part (the share of hidden tests passed, times its weight) — and its tokens get the episode's outcome advantage (RLOO) plus
 * the turn's score against the leave-one-out mean of the same task's turns at the same index
 * (a baseline per (task, turn), GiGPO-style: these states recur). A turn that improves on the
 * previous one earns `bonus` × the improvement over the larger of that turn's score and its
 * group's mean, so a first turn played badly on purpose earns nothing.
 */

/** One turn of a trajectory: the token positions the policy wrote, and the program's score. */
interface Turn {
  positions: number[];
  score: number;
}

/** A trajectory's turns, in order, read from its tokens (a run's score from the report after it). */
export function turnsOf(tr: Trajectory): Turn[] {
  const out: Turn[] = [];
  let positions: number[] = [];
  for (let i = 0; i < tr.tokens.length; i++) {
    if (!tr.owned[i]) continue;
    positions.push(i);
    const t = tr.tokens[i];
    if (t !== RUN && t !== SUBMIT) continue;
    let score = tr.parts.pass;
    if (t === RUN) {
      const end = tr.tokens.indexOf(SEP, i + 1);
      try {
        const r = parseTestReport(tr.tokens.slice(i + 1, end + 1));
        score = r.total > 0 ? r.passed / r.total : 0;
      } catch {
        score = 0; // an examples task's `got …`, or no report (the context ended): no score of its own
      }
    }
    out.push({ positions, score });
    positions = [];
  }
  return out;
}

/** Leave-one-out mean of `xs` without index `i` (0 with nothing else). */
const leaveOneOut = (xs: readonly number[], i: number) =>
  xs.length < 2 ? (xs[i] ?? 0) : (xs.reduce((s, x) => s + x, 0) - (xs[i] ?? 0)) / (xs.length - 1);

/** Per-token advantages of `trajs` (`groups`: each trajectory's group, its task's episodes). */
export function turnAdvantages(
  trajs: readonly Trajectory[],
  groups: readonly string[],
  bonus: number,
): PerToken[] {
  const outcome = rlooAdvantages(
    trajs.map((t) => t.return),
    groups,
  );
  const turns = trajs.map(turnsOf);
  // Scores per (group, turn index), with the trajectory each came from.
  const cell = new Map<string, { traj: number; score: number }[]>();
  turns.forEach((ts, k) =>
    ts.forEach((turn, j) => {
      const key = `${groups[k]}\u0000${j}`;
      const list = cell.get(key) ?? [];
      list.push({ traj: k, score: turn.score });
      cell.set(key, list);
    }),
  );
  const baseline = (k: number, j: number): number => {
    const list = cell.get(`${groups[k]}\u0000${j}`) ?? [];
    const scores = list.map((c) => c.score);
    return leaveOneOut(
      scores,
      list.findIndex((c) => c.traj === k),
    );
  };
  return trajs.map((tr, k) => {
    const adv = new Array<number>(tr.tokens.length).fill(0);
    const ret = new Array<number>(tr.tokens.length).fill(tr.return);
    const ts = turns[k] ?? [];
    ts.forEach((turn, j) => {
      const prev = ts[j - 1];
      const improved = prev ? Math.max(0, turn.score - Math.max(prev.score, baseline(k, j - 1))) : 0;
      const a = (outcome[k] ?? 0) + (turn.score - baseline(k, j)) + bonus * improved;
      for (const p of turn.positions) adv[p] = a;
    });
    return { advantages: adv, returns: ret };
  });
}
