import * as tf from '@tensorflow/tfjs';
import { LORA_TRAINED_WHOLE, mergedWeights, type LoraConfig } from '../policy/lora';
import type { Params } from '../policy/model';
import { PolicyTrainer } from './trainer';
import {
  adaptersFromCheckpoint,
  paramsFromCheckpoint,
  unpackTensors,
  type Checkpoint,
  type PackedTensors,
} from '../policy/weights';
import { type TrainerConfig } from './learner-config';

/** Checks that `base` can be the base of the LoRA checkpoint `checkpoint`. */
function checkBase(checkpoint: Checkpoint, base: Checkpoint | undefined): Checkpoint {
  if (!base)
    throw new Error('this version holds LoRA adapters only, and the run has no full version (its base)');
  if (base.lora) throw new Error('the base of a LoRA version must be a full version');
  const a: Record<string, unknown> = { ...base.model };
  const b: Record<string, unknown> = { ...checkpoint.model };
  if ([...new Set([...Object.keys(a), ...Object.keys(b)])].some((k) => a[k] !== b[k]))
    throw new Error('the LoRA version and its base were made for different model shapes');
  return base;
}

/**
 * Every parameter of the policy a stored checkpoint runs (a LoRA version merged into `base`),
 * as new trainable variables: the starting weights of a run that starts from another's version.
 */
export function policyFromCheckpoint(checkpoint: Checkpoint, base: Checkpoint | undefined): Params {
  if (!checkpoint.lora) return paramsFromCheckpoint(checkpoint);
  const lora = checkpoint.lora;
  const baseParams = paramsFromCheckpoint(checkBase(checkpoint, base));
  let adapters: Params | undefined;
  try {
    adapters = adaptersFromCheckpoint(checkpoint);
    const merged = mergedWeights(baseParams, adapters, lora);
    const out: Params = new Map([...merged].map(([name, t]) => [name, tf.variable(t, true)]));
    tf.dispose([...merged.values()]);
    return out;
  } finally {
    tf.dispose([...(adapters?.values() ?? []), ...baseParams.values()]);
  }
}

const shapeOf = (shape: readonly number[]) => `[${shape.join(', ')}]`;

/**
 * Checks that a stored Adam state fits `trainer`: `iter`, then a first moment per trained tensor,
 * then a second moment per trained tensor, each of that tensor's shape. Moments named after the
 * trainer's tensors (`NAME/m`, `NAME/v`) are checked by name and may be a subset (the tensors an
 * update strategy trained); older ones, named after tfjs's variables (not stable across
 * sessions), go by position. A state of
 * another policy (another model, every parameter where the trainer trains adapters, or the
 * reverse) would load silently and break the next step. It may hold no moments (no step taken
 * yet), or, for a LoRA version stored before the value head trained beside the adapters (it
 * lacks `LORA_TRAINED_WHOLE`), the moments of the adapters only: those tensors come last, and
 * start with moments of zero (see `PolicyTrainer.loadAdapters`).
 */
function checkAdamState(state: PackedTensors, trainer: PolicyTrainer, checkpoint: Checkpoint): void {
  const vars = [...(trainer.adapters ?? trainer.params)];
  const what = trainer.adapters ? 'LoRA adapters' : 'parameters';
  const [iter, ...entries] = state.entries;
  // `RateAdam`'s per-tensor step counts, last when stored: one per tensor with moments.
  const counts = entries.at(-1)?.name === 'steps' ? entries.at(-1) : undefined;
  const moments = counts ? entries.slice(0, -1) : entries;
  if (counts && (counts.shape.length !== 1 || counts.shape[0] !== moments.length / 2))
    throw new Error(
      `the stored Adam state counts steps for ${counts.shape.join('×')} tensors, its moments are of ${moments.length / 2}`,
    );
  if (iter?.name !== 'iter' || iter.shape.length !== 0)
    throw new Error(`the stored Adam state does not start with its step counter (${iter?.name ?? 'empty'})`);
  const stored = new Set(checkpoint.params.entries.map((e) => e.name));
  const olderLora =
    checkpoint.lora && trainer.adapters
      ? LORA_TRAINED_WHOLE.filter((n) => trainer.adapters?.has(n) && !stored.has(n)).length
      : 0;
  const n = moments.length / 2;
  // Named after the trainer's tensors (`RateAdam` with names): a subset, each of its tensor's
  // shape; an update strategy leaves the tensors it never trained without moments.
  const byName = new Map(vars);
  const firsts = moments.slice(0, n);
  const named =
    n > 0 &&
    Number.isInteger(n) &&
    firsts.every((m, i) => {
      const base = m.name.replace(/\/m$/, '');
      return m.name.endsWith('/m') && byName.has(base) && moments[n + i]?.name === `${base}/v`;
    });
  if (named) {
    for (const m of moments) {
      const name = m.name.replace(/\/[mv]$/, '');
      const v = byName.get(name);
      if (!v || m.shape.join() !== v.shape.join())
        throw new Error(
          `the stored Adam moment ${m.name} is ${shapeOf(m.shape)}, the trainer's ${name} ` +
            `${shapeOf(v?.shape ?? [])}: the version's optimiser state is not for its weights`,
        );
    }
    return;
  }
  const fits = n === 0 || n === vars.length || (olderLora > 0 && n === vars.length - olderLora);
  if (!fits)
    throw new Error(
      `the stored Adam state holds ${moments.length} moments, the trainer trains ${vars.length} ` +
        `tensors (${what}, ${2 * vars.length} moments): the version's optimiser state is not for its weights`,
    );
  for (let i = 0; i < n; i++) {
    const [name, v] = vars[i] ?? [];
    for (const m of [moments[i], moments[n + i]])
      if (!m || !v || m.shape.join() !== v.shape.join())
        throw new Error(
          `the stored Adam moment ${m?.name ?? i} is ${shapeOf(m?.shape ?? [])}, the trainer's ` +
            `${name ?? i} (${what}, position ${i}) ${shapeOf(v?.shape ?? [])}: the version's ` +
            `optimiser state is not for its weights`,
        );
  }
}

/**
 * The full version a LoRA trainer's adapters need stored before them, or undefined when they
 * need none (a trainer of every parameter, or `storedBase` is its base). A LoRA version merges
 * into its run's newest full version at or below it (`storedBase`): when that is not the
 * trainer's own base (the run has none yet, or another policy's), the adapters would load onto
 * the wrong weights, or not at all. The base goes in as a LoRA pipeline run's version 0: every
 * parameter of the frozen base, step 0, without Adam state (the trainer's is the adapters').
 */
export async function missingBase(
  trainer: PolicyTrainer,
  storedBase: Checkpoint | undefined,
): Promise<Checkpoint | undefined> {
  if (!trainer.adapters || !trainer.lora) return undefined;
  const own: Checkpoint = { ...(await trainer.exportPolicy(true)), step: 0 };
  return storedBase && sameWeights(storedBase, own) ? undefined : own;
}

/** Whether two checkpoints hold the same model and bit-identical tensors, laid out alike. */
function sameWeights(a: Checkpoint, b: Checkpoint): boolean {
  const ma: Record<string, unknown> = { ...a.model };
  const mb: Record<string, unknown> = { ...b.model };
  if (Boolean(a.lora) !== Boolean(b.lora)) return false;
  if ([...new Set([...Object.keys(ma), ...Object.keys(mb)])].some((k) => ma[k] !== mb[k])) return false;
  const ea = a.params.entries;
  const eb = b.params.entries;
  const entry = (e: (typeof ea)[number]) => `${e.name}:${e.shape.join()}:${e.dtype}:${e.offset}`;
  if (ea.length !== eb.length || ea.some((e, i) => !eb[i] || entry(e) !== entry(eb[i]))) return false;
  if (a.params.data.byteLength !== b.params.data.byteLength) return false;
  // Bitwise (as int32): -0 and 0 differ, and a NaN equals itself.
  const da = new Int32Array(a.params.data);
  const db = new Int32Array(b.params.data);
  for (let i = 0; i < da.length; i++) if (da[i] !== db[i]) return false;
  return true;
}

/**
 * A trainer that continues from a stored checkpoint: its weights, its Adam state (when stored)
 * and its step count. A LoRA checkpoint holds only adapters: `base` is then the run's full
 * version they were trained on (its version 0), and the trainer trains the same adapters on it.
 * `lora` is the run's own setting: a LoRA run's version 0 is that full base, and the trainer
 * continuing from it trains fresh adapters on it (not every parameter); a trained full version
 * (step > 0) goes on as it was trained, every parameter.
 */
export async function trainerFromCheckpoint(
  checkpoint: Checkpoint,
  base: Checkpoint | undefined,
  config: TrainerConfig,
  lora?: LoraConfig,
): Promise<PolicyTrainer> {
  // Fresh adapters go only on an untrained full version (a LoRA run's version 0): a trained full
  // version's Adam state is for every parameter, and it goes on training every parameter.
  const freshAdapters = !checkpoint.lora && checkpoint.step === 0 ? lora : undefined;
  const stored = checkpoint.lora;
  const params = stored
    ? paramsFromCheckpoint(checkBase(checkpoint, base))
    : paramsFromCheckpoint(checkpoint);
  let trainer: PolicyTrainer;
  try {
    trainer = new PolicyTrainer(checkpoint.model, config, params, stored ?? freshAdapters);
  } catch (err) {
    tf.dispose([...params.values()]);
    throw err;
  }
  try {
    if (stored) {
      const adapters = adaptersFromCheckpoint(checkpoint);
      try {
        trainer.loadAdapters(adapters);
      } finally {
        tf.dispose([...adapters.values()]);
      }
    }
    trainer.step = checkpoint.step;
    if (checkpoint.optimizer) {
      checkAdamState(checkpoint.optimizer, trainer, checkpoint);
      const named = unpackTensors(checkpoint.optimizer);
      try {
        await trainer.optimizer.setWeights(named);
      } finally {
        tf.dispose(named.map((n) => n.tensor));
      }
    }
  } catch (err) {
    trainer.dispose();
    throw err;
  }
  return trainer;
}

/**
 * What a resume from `checkpoint` (version `version`) says when the version holds no optimiser
 * state: retention keeps Adam's moments on a run's newest version only, so an older version (or
 * one stored before the state was kept) restarts them from zero. Undefined when they come back.
 */
export function freshOptimizerNotice(checkpoint: Checkpoint, version: number): string | undefined {
  if (checkpoint.optimizer) return undefined;
  return (
    `version ${version} holds no optimiser state (only a run's newest version keeps it): training ` +
    `goes on from its weights and step ${checkpoint.step} with fresh Adam moments`
  );
}
