import { validateModelArgs, type ModelArgs } from './config';
import type { Checkpoint, TensorEntry } from './weights';

/**
 * A full checkpoint as a text file (JSON, the buffer in base64): how a built-in base policy ships
 * with the page and how the node bench saves one. Weights only: no optimiser state, no LoRA.
 */
interface CheckpointFile {
  format: 'sandbox-rl-lab/weights@1';
  model: ModelArgs;
  step: number;
  entries: TensorEntry[];
  /** The float32 values of every entry, back to back, base64. */
  data: string;
}

const CHUNK = 0x8000;

function toBase64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += CHUNK) s += String.fromCharCode(...bytes.subarray(i, i + CHUNK));
  return btoa(s);
}

function fromBase64(text: string): ArrayBuffer {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out.buffer;
}

/** The checkpoint's weights as a file's text. */
export function checkpointToText(ckpt: Checkpoint): string {
  if (ckpt.lora) throw new Error('a LoRA checkpoint holds adapters only: save the merged weights');
  const file: CheckpointFile = {
    format: ckpt.format,
    model: ckpt.model,
    step: ckpt.step,
    entries: ckpt.params.entries,
    data: toBase64(new Uint8Array(ckpt.params.data)),
  };
  return JSON.stringify(file);
}

/**
 * A checkpoint from a file's text, every field checked (`paramsFromCheckpoint` then checks the
 * tensors against the model's shapes). `name` says which file in the errors.
 */
export function checkpointFromText(text: string, name: string): Checkpoint {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${name} is not JSON: not a weights file`);
  }
  const f = raw as Partial<CheckpointFile> | null;
  if (typeof f !== 'object' || f === null || f.format !== 'sandbox-rl-lab/weights@1')
    throw new Error(`${name} is not a weights file (format sandbox-rl-lab/weights@1)`);
  if (typeof f.model !== 'object' || f.model === null) throw new Error(`${name} names no model`);
  validateModelArgs(f.model);
  if (!Array.isArray(f.entries) || typeof f.data !== 'string')
    throw new Error(`${name} has no tensors (entries and data)`);
  let data: ArrayBuffer;
  try {
    data = fromBase64(f.data);
  } catch {
    throw new Error(`${name}: its data is not base64`);
  }
  if (data.byteLength % 4 !== 0) throw new Error(`${name}: its data is not whole float32 values`);
  // A missing or odd step count reads 0: it is a label, nothing is computed from it.
  const step = typeof f.step === 'number' && Number.isInteger(f.step) && f.step >= 0 ? f.step : 0;
  return { format: f.format, model: f.model, step, params: { entries: f.entries, data } };
}
