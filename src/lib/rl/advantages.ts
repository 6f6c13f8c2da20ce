/**
 * Advantage estimators (DESIGN §5), pure functions over plain arrays.
 * Episode-level estimators take one return per episode and a group id per episode (the same
 * task sampled G times forms a group).
 */

/** Groups episode indices by group id, in first-seen order. */
function groupsOf(groups: readonly string[]): number[][] {
  const by = new Map<string, number[]>();
  groups.forEach((g, i) => {
    const list = by.get(g) ?? [];
    list.push(i);
    by.set(g, list);
  });
  return [...by.values()];
}

/**
 * GRPO: A_i = (R_i − mean_group) / (std_group + ε), population std over the group. A group of
 * one has advantage 0 (no comparison to make).
 */
export function grpoAdvantages(returns: readonly number[], groups: readonly string[], eps = 1e-6): number[] {
  const out = new Array<number>(returns.length).fill(0);
  for (const idx of groupsOf(groups)) {
    if (idx.length < 2) continue;
    const rs = idx.map((i) => returns[i] ?? 0);
    const mean = rs.reduce((a, b) => a + b, 0) / rs.length;
    const std = Math.sqrt(rs.reduce((a, r) => a + (r - mean) ** 2, 0) / rs.length);
    idx.forEach((i, k) => (out[i] = ((rs[k] ?? 0) - mean) / (std + eps)));
  }
  return out;
}

/**
 * RLOO: A_i = R_i − mean of the other returns of its group (leave-one-out baseline, what
 * LLM-in-Sandbox uses). A group of one has advantage 0.
 */
export function rlooAdvantages(returns: readonly number[], groups: readonly string[]): number[] {
  const out = new Array<number>(returns.length).fill(0);
  for (const idx of groupsOf(groups)) {
    if (idx.length < 2) continue;
    const total = idx.reduce((s, i) => s + (returns[i] ?? 0), 0);
    for (const i of idx) out[i] = (returns[i] ?? 0) - (total - (returns[i] ?? 0)) / (idx.length - 1);
  }
  return out;
}

/**
 * GAE(γ, λ) over one episode's steps: δ_t = r_t + γ·V_{t+1} − V_t (V after the last step is 0),
 * A_t = δ_t + γλ·A_{t+1}. Returns the advantages and the value targets A_t + V_t.
 */
export function gae(
  rewards: readonly number[],
  values: readonly number[],
  gamma: number,
  lambda: number,
): { advantages: number[]; returns: number[] } {
  const n = rewards.length;
  if (values.length !== n) throw new Error(`gae: ${n} rewards but ${values.length} values`);
  const advantages = new Array<number>(n).fill(0);
  let next = 0;
  for (let t = n - 1; t >= 0; t--) {
    const v = values[t] ?? 0;
    const vNext = t + 1 < n ? (values[t + 1] ?? 0) : 0;
    const delta = (rewards[t] ?? 0) + gamma * vNext - v;
    next = delta + gamma * lambda * next;
    advantages[t] = next;
  }
  return { advantages, returns: advantages.map((a, t) => a + (values[t] ?? 0)) };
}

/**
 * Value-baseline advantages over a batch of steps: A_t = G_t − V(s_t), then normalised to mean 0
 * and std 1 over the batch (population std, + ε), as CleanRL's `norm_adv`. A custom environment's
 * MLP uses them: its returns are on whatever scale the user's rewards give (CartPole's reach 100),
 * and normalising keeps the policy step's size independent of that scale.
 */
export function normalisedAdvantages(
  returns: ArrayLike<number>,
  values: ArrayLike<number>,
  eps = 1e-8,
): Float32Array {
  const n = returns.length;
  if (values.length !== n) throw new Error(`normalisedAdvantages: ${n} returns but ${values.length} values`);
  const adv = Float64Array.from({ length: n }, (_, t) => (returns[t] ?? 0) - (values[t] ?? 0));
  const mean = adv.reduce((a, b) => a + b, 0) / Math.max(1, n);
  const std = Math.sqrt(adv.reduce((a, x) => a + (x - mean) ** 2, 0) / Math.max(1, n));
  return Float32Array.from(adv, (x) => (x - mean) / (std + eps));
}
