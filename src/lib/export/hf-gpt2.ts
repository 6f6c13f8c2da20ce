/**
 * The policy as a Hugging Face GPT2LMHeadModel folder (issue #42; the mapping is in
 * shared/research/export.md): config.json, model.safetensors, tokenizer.json, tokenizer_config.json
 * and generation_config.json, and the same folder read back into the policy's weights. Our
 * transformer is GPT-2's layout already (pre-LN, learned positions, fused q,k,v as x @ W, GELU as
 * x·σ(1.702x), which transformers calls `quick_gelu`); only the head is transposed, and the value
 * head is dropped. A policy with tied embeddings is a GPT-2 with `tie_word_embeddings` (its
 * lm_head.weight written equal to wte), and a tied folder reads back as one.
 */
import * as tf from '@tensorflow/tfjs';
import { DEFAULT_ENV_CONFIG } from '../env/config';
import { BOS, PAD, RUN, SEP, SUBMIT, VOCAB, VOCAB_SIZE } from '../env/vocab';
import { validateModelArgs, type ModelArgs } from '../policy/config';
import { paramShapes, type Params, type Weights } from '../policy/model';
import { f32Tensor, f32Values, readSafetensors, writeSafetensors, type RawTensor } from './safetensors';

/** A tensor's shape and float32 values, C order. */
export interface HostTensor {
  shape: number[];
  values: Float32Array;
}

/** The policy's parameters by name (`policy/model.ts` names), on the host. */
export type PolicyTensors = Map<string, HostTensor>;

/** The files of a model folder by name. */
export type ModelFiles = Map<string, Uint8Array>;

/** Parameters of ours that a GPT2LMHeadModel has no place for. */
const DROPPED = ['value.w', 'value.b'];

/** Layer-norm ε of `policy/ops.ts`. */
const LN_EPS = 1e-5;

/**
 * Why a policy with `args` is not a stock GPT-2, or null when it is. The copy (pointer) head mixes
 * the vocabulary head's softmax with attention over the context's tokens: GPT2LMHeadModel has no
 * such head, and dropping it would change every distribution.
 */
export function hfGpt2Refusal(args: ModelArgs): string | null {
  const P = args.pointerDim ?? 0;
  if (P > 0)
    return (
      `the policy has a copy (pointer) head (pointerDim ${P}): its next-token distribution mixes the ` +
      'vocabulary head with attention over the context, which a stock GPT2LMHeadModel cannot compute; ' +
      'export a policy trained without it'
    );
  return null;
}

/** Our parameter name → its transformers key (the head is transposed on the way). */
function hfKey(name: string): string | null {
  if (DROPPED.includes(name)) return null;
  const fixed: Record<string, string> = {
    tok_emb: 'transformer.wte.weight',
    pos_emb: 'transformer.wpe.weight',
    'ln_f.g': 'transformer.ln_f.weight',
    'ln_f.b': 'transformer.ln_f.bias',
    'head.w': 'lm_head.weight',
  };
  if (fixed[name]) return fixed[name];
  const m = /^h(\d+)\.(.+)$/.exec(name);
  const block: Record<string, string> = {
    'ln1.g': 'ln_1.weight',
    'ln1.b': 'ln_1.bias',
    'attn.wqkv': 'attn.c_attn.weight',
    'attn.bqkv': 'attn.c_attn.bias',
    'attn.wo': 'attn.c_proj.weight',
    'attn.bo': 'attn.c_proj.bias',
    'ln2.g': 'ln_2.weight',
    'ln2.b': 'ln_2.bias',
    'mlp.w1': 'mlp.c_fc.weight',
    'mlp.b1': 'mlp.c_fc.bias',
    'mlp.w2': 'mlp.c_proj.weight',
    'mlp.b2': 'mlp.c_proj.bias',
  };
  const sub = m ? block[m[2] as string] : undefined;
  if (!m || !sub) throw new Error(`parameter ${name} has no GPT-2 counterpart`);
  return `transformer.h.${m[1]}.${sub}`;
}

/** [R, C] → [C, R]. */
function transpose(t: HostTensor): HostTensor {
  const [R, C] = t.shape as [number, number];
  const out = new Float32Array(R * C);
  for (let r = 0; r < R; r++) for (let c = 0; c < C; c++) out[c * R + r] = t.values[r * C + c] as number;
  return { shape: [C, R], values: out };
}

/** Reads the parameters off the backend (async: no GPU stall). */
export async function readPolicyTensors(params: Weights): Promise<PolicyTensors> {
  const out: PolicyTensors = new Map();
  for (const [name, t] of params)
    out.set(name, { shape: [...t.shape], values: new Float32Array(await t.data()) });
  return out;
}

/** The parameters as trainable variables (the caller owns them). */
export function paramsFromTensors(tensors: PolicyTensors): Params {
  const out: Params = new Map();
  for (const [name, t] of tensors)
    out.set(
      name,
      tf.tidy(() => tf.variable(tf.tensor(t.values, t.shape), true)),
    );
  return out;
}

/** Checks `tensors` hold exactly the parameters of a model with `args`, shapes included. */
function checkPolicyTensors(args: ModelArgs, tensors: PolicyTensors): void {
  const expected = paramShapes(args);
  for (const [name, shape] of expected) {
    const t = tensors.get(name);
    if (!t) throw new Error(`the policy has no parameter ${name}`);
    if (t.shape.join(',') !== shape.join(','))
      throw new Error(`parameter ${name} has shape [${t.shape}], the model needs [${shape}]`);
    if (t.values.length !== shape.reduce((a, b) => a * b, 1))
      throw new Error(`parameter ${name} holds ${t.values.length} values, not its shape's`);
  }
  if (tensors.size !== expected.length)
    throw new Error(`the policy has ${tensors.size} parameters, a model with its args ${expected.length}`);
}

/** The config.json of a GPT2LMHeadModel that computes our policy's logits. */
function configJson(args: ModelArgs): Record<string, unknown> {
  return {
    architectures: ['GPT2LMHeadModel'],
    model_type: 'gpt2',
    vocab_size: args.vocabSize,
    n_positions: args.contextLength,
    n_embd: args.dModel,
    n_layer: args.nLayers,
    n_head: args.nHeads,
    n_inner: args.dMlp,
    // x·σ(1.702x): `gelu_new` (tanh) or `gelu` (erf) would change the logits.
    activation_function: 'quick_gelu',
    layer_norm_epsilon: LN_EPS,
    resid_pdrop: 0,
    embd_pdrop: 0,
    attn_pdrop: 0,
    summary_first_dropout: 0,
    initializer_range: 0.02,
    scale_attn_weights: true,
    scale_attn_by_inverse_layer_idx: false,
    reorder_and_upcast_attn: false,
    // transformers ties lm_head to wte unless told not to: say which our policy does.
    tie_word_embeddings: args.tieEmbeddings === true,
    use_cache: true,
    bos_token_id: BOS,
    eos_token_id: SUBMIT,
    pad_token_id: PAD,
    torch_dtype: 'float32',
  };
}

/** The tokens special to the tokenizer (dropped by `skip_special_tokens`): padding and the start. */
const SPECIAL = new Set([PAD, BOS]);

/**
 * A word-level tokenizer over our vocabulary: the text form is the tokens separated by spaces
 * (`f( 1 )= 3 ; x * 3 + 1`), as `renderTokens` writes it. The control tokens are added tokens, so
 * they split off even without spaces; a word outside the vocabulary is an error (there is no unk).
 */
function tokenizerJson(vocabSize: number): Record<string, unknown> {
  const words = VOCAB.slice(0, vocabSize);
  const controls = [PAD, BOS, RUN, SUBMIT, SEP].filter((id) => id < vocabSize);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: controls.map((id) => ({
      id,
      content: words[id],
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: SPECIAL.has(id),
    })),
    normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: null,
    // No decoder: tokenizers joins the tokens with spaces, our text form.
    decoder: null,
    model: { type: 'WordLevel', vocab: Object.fromEntries(words.map((w, i) => [w, i])), unk_token: '<unk>' },
  };
}

/**
 * Renders chat `messages` into our observation text: `<bos>`, each observation (system or user
 * message) followed by `<sep>`, each assistant turn (a program and its `<run>` or `<submit>`) as it
 * is, separated by spaces: `<bos> f( 1 )= 3 <sep> x + 2 <run> got 3 <sep>`.
 */
export const CHAT_TEMPLATE =
  "{{ '<bos>' }}{% for m in messages %}{% if m['role'] == 'assistant' %}{{ ' ' + m['content'] }}" +
  "{% else %}{{ ' ' + m['content'] + ' <sep>' }}{% endif %}{% endfor %}";

/** The chat template's rendering, in TypeScript (what the Python check compares it with). */
export function renderChat(messages: readonly { role: string; content: string }[]): string {
  return ['<bos>', ...messages.map((m) => (m.role === 'assistant' ? m.content : `${m.content} <sep>`))].join(
    ' ',
  );
}

function tokenizerConfigJson(args: ModelArgs): Record<string, unknown> {
  return {
    tokenizer_class: 'PreTrainedTokenizerFast',
    bos_token: '<bos>',
    eos_token: '<submit>',
    pad_token: '<pad>',
    model_max_length: args.contextLength,
    clean_up_tokenization_spaces: false,
    chat_template: CHAT_TEMPLATE,
  };
}

function generationConfigJson(args: ModelArgs): Record<string, unknown> {
  return {
    bos_token_id: BOS,
    // A turn ends at `<run>` (the sandbox answers) or `<submit>` (the episode ends).
    eos_token_id: [RUN, SUBMIT].filter((id) => id < args.vocabSize),
    pad_token_id: PAD,
    max_new_tokens: DEFAULT_ENV_CONFIG.maxTokensPerTurn,
    do_sample: true,
    temperature: 1.0,
    top_k: 0,
    top_p: 1.0,
  };
}

const json = (v: unknown) => new TextEncoder().encode(`${JSON.stringify(v, null, 2)}\n`);

/**
 * The Hugging Face folder of a policy (`args`, its parameters `tensors`), file name → bytes.
 * Refuses a policy with a copy head (`hfGpt2Refusal`) or whose tensors are not its args' model.
 * `metadata` goes into model.safetensors' string-only `__metadata__` (beside `format: pt`, which
 * transformers requires).
 */
export function exportHfGpt2(
  args: ModelArgs,
  tensors: PolicyTensors,
  metadata: Record<string, string> = {},
): ModelFiles {
  validateModelArgs(args);
  const refusal = hfGpt2Refusal(args);
  if (refusal) throw new Error(`not exported as GPT-2: ${refusal}`);
  if (args.vocabSize > VOCAB_SIZE)
    throw new Error(`vocabSize ${args.vocabSize} exceeds our vocabulary (${VOCAB_SIZE} tokens)`);
  checkPolicyTensors(args, tensors);
  const out = new Map<string, RawTensor>();
  for (const [name, t] of tensors) {
    const key = hfKey(name);
    if (key === null) continue;
    const host = name === 'head.w' ? transpose(t) : t; // [D, V] → lm_head's [V, D]
    out.set(key, f32Tensor(host.shape, host.values));
    // Tied: lm_head.weight is wte itself, [V, D]; written too, so that the file names the head.
    if (name === 'tok_emb' && args.tieEmbeddings) out.set('lm_head.weight', f32Tensor(t.shape, t.values));
  }
  return new Map([
    ['config.json', json(configJson(args))],
    ['generation_config.json', json(generationConfigJson(args))],
    ['model.safetensors', writeSafetensors(out, { ...metadata, format: 'pt' })],
    ['tokenizer.json', json(tokenizerJson(args.vocabSize))],
    ['tokenizer_config.json', json(tokenizerConfigJson(args))],
  ]);
}

function parseJson(files: ModelFiles, name: string): Record<string, unknown> {
  const bytes = files.get(name);
  if (!bytes) throw new Error(`the folder has no ${name}`);
  let v: unknown;
  try {
    v = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new Error(`${name} is not JSON`, { cause: err });
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new Error(`${name} is not a JSON object`);
  return v as Record<string, unknown>;
}

/** The model args a GPT-2 config describes, refusing what our policy cannot compute. */
function argsFromConfig(c: Record<string, unknown>): ModelArgs {
  const int = (key: string): number => {
    const v = c[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0)
      throw new Error(`config.json: ${key} is ${JSON.stringify(v)}, not a positive integer`);
    return v;
  };
  if (c.model_type !== 'gpt2')
    throw new Error(`config.json: model_type is ${JSON.stringify(c.model_type)}, not gpt2`);
  const act = c.activation_function;
  if (act !== 'quick_gelu')
    throw new Error(
      `config.json: activation_function is ${JSON.stringify(act)}; our policy computes quick_gelu (x·σ(1.702x)) only`,
    );
  const eps = c.layer_norm_epsilon ?? LN_EPS;
  if (eps !== LN_EPS)
    throw new Error(`config.json: layer_norm_epsilon is ${JSON.stringify(eps)}; ours is ${LN_EPS}`);
  for (const key of ['scale_attn_by_inverse_layer_idx', 'add_cross_attention'])
    if (c[key] === true) throw new Error(`config.json: ${key} is true; our policy does not compute it`);
  if (c.scale_attn_weights === false)
    throw new Error('config.json: scale_attn_weights is false; our attention is scaled by 1/√d_head');
  const dModel = int('n_embd');
  const args: ModelArgs = {
    vocabSize: int('vocab_size'),
    contextLength: int('n_positions'),
    dModel,
    nLayers: int('n_layer'),
    nHeads: int('n_head'),
    // null (absent) means 4·n_embd in transformers.
    dMlp: c.n_inner === null || c.n_inner === undefined ? 4 * dModel : int('n_inner'),
  };
  validateModelArgs(args);
  if (args.vocabSize > VOCAB_SIZE)
    throw new Error(
      `config.json: vocab_size ${args.vocabSize} is not our vocabulary's (${VOCAB_SIZE} tokens): not a policy of this page`,
    );
  return args;
}

/** Checks tokenizer.json maps every token of our vocabulary (the model's first `vocabSize`) to its id. */
function checkTokenizer(t: Record<string, unknown>, vocabSize: number): void {
  const model = t.model as { type?: unknown; vocab?: unknown } | undefined;
  if (!model || typeof model.vocab !== 'object' || model.vocab === null)
    throw new Error('tokenizer.json has no model vocabulary');
  const vocab = model.vocab as Record<string, unknown>;
  const size = Object.keys(vocab).length;
  if (size !== vocabSize)
    throw new Error(`tokenizer.json has ${size} tokens, config.json's vocab_size is ${vocabSize}`);
  VOCAB.slice(0, vocabSize).forEach((w, id) => {
    if (vocab[w] !== id)
      throw new Error(
        `tokenizer.json maps ${JSON.stringify(w)} to ${JSON.stringify(vocab[w])}; our vocabulary's id is ${id}`,
      );
  });
}

/**
 * A tied folder's lm_head.weight, when it holds one, must be wte: transformers would compute with
 * wte in its place, so a different one is a folder that is not what it seems. Marks it `used`.
 */
function checkTiedHead(byKey: Map<string, RawTensor>, used: Set<string>): void {
  const head = byKey.get('lm_head.weight');
  if (!head) return;
  const wte = byKey.get('transformer.wte.weight');
  const same =
    wte !== undefined &&
    head.dtype === wte.dtype &&
    head.shape.join(',') === wte.shape.join(',') &&
    head.bytes.every((b, i) => b === wte.bytes[i]);
  if (!same)
    throw new Error(
      'config.json ties lm_head to the embedding, but model.safetensors holds an lm_head.weight unlike transformer.wte.weight',
    );
  used.add('lm_head.weight');
}

/**
 * A GPT-2 folder (as `exportHfGpt2` writes it, or one transformers saved) read back into the
 * policy's args and parameters. Refuses, saying what is wrong: a missing file, a config our policy
 * cannot compute, a tokenizer that is not our vocabulary, a missing, misshapen, non-F32 or unknown
 * tensor, a truncated safetensors file. The value head, which the folder does not hold, starts at
 * zero (`valueHead: 'zero'`): the logits are the exported policy's, its value estimates are not.
 * A folder whose config.json ties lm_head to wte (transformers' default when it says nothing)
 * reads back as a policy with tied embeddings (`tieEmbeddings`).
 */
export function importHfGpt2(files: ModelFiles): {
  args: ModelArgs;
  tensors: PolicyTensors;
  valueHead: 'zero';
} {
  for (const name of ['config.json', 'model.safetensors', 'tokenizer.json'])
    if (!files.has(name)) throw new Error(`the folder has no ${name}`);
  const config = parseJson(files, 'config.json');
  // transformers ties lm_head to wte when config.json does not say otherwise.
  const tied = config.tie_word_embeddings !== false;
  const args: ModelArgs = tied ? { ...argsFromConfig(config), tieEmbeddings: true } : argsFromConfig(config);
  checkTokenizer(parseJson(files, 'tokenizer.json'), args.vocabSize);
  const st = readSafetensors(files.get('model.safetensors') as Uint8Array, 'model.safetensors');
  // Keys with or without the `transformer.` prefix (the original GPT-2 checkpoints have none);
  // the causal-mask buffers older transformers saved are not weights.
  const byKey = new Map<string, RawTensor>();
  for (const [key, t] of st.tensors) {
    if (/\.attn\.(masked_)?bias$/.test(key)) continue;
    byKey.set(key === 'lm_head.weight' || key.startsWith('transformer.') ? key : `transformer.${key}`, t);
  }
  if (!tied && !byKey.has('lm_head.weight'))
    throw new Error(
      'model.safetensors has no lm_head.weight and config.json does not tie it to the embedding',
    );
  const tensors: PolicyTensors = new Map();
  const used = new Set<string>();
  if (tied) checkTiedHead(byKey, used);
  for (const [name, shape] of paramShapes(args)) {
    if (DROPPED.includes(name)) {
      tensors.set(name, { shape, values: new Float32Array(shape.reduce((a, b) => a * b, 1)) });
      continue;
    }
    const key = hfKey(name) as string;
    const t = byKey.get(key);
    if (!t) throw new Error(`model.safetensors has no ${key}`);
    if (t.dtype !== 'F32')
      throw new Error(`model.safetensors: ${key} is ${t.dtype}; the policy reads F32 only`);
    const hfShape = name === 'head.w' ? [shape[1], shape[0]] : shape;
    if (t.shape.join(',') !== hfShape.join(','))
      throw new Error(
        `model.safetensors: ${key} has shape [${t.shape.join(', ')}], config.json implies [${hfShape.join(', ')}]`,
      );
    const host = { shape: t.shape, values: f32Values(t) };
    tensors.set(name, name === 'head.w' ? transpose(host) : host);
    used.add(key);
  }
  const extra = [...byKey.keys()].filter((k) => !used.has(k));
  if (extra.length > 0)
    throw new Error(`model.safetensors holds tensors GPT-2 of this config has not: ${extra.join(', ')}`);
  return { args, tensors, valueHead: 'zero' };
}
