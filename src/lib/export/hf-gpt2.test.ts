import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { BOS, SEP, tokenId, VOCAB_SIZE } from '../env/vocab';
import { observationTokens } from '../env/tokenizer';
import { DEFAULT_MODEL_ARGS, type ModelArgs } from '../policy/config';
import { forward, initParams, type Params } from '../policy/model';
import {
  exportHfGpt2,
  hfGpt2Refusal,
  importHfGpt2,
  paramsFromTensors,
  readPolicyTensors,
  renderChat,
  type ModelFiles,
  type PolicyTensors,
} from './hf-gpt2';
import { f32Tensor, f32Values, readSafetensors, writeSafetensors, type RawTensor } from './safetensors';

const small: ModelArgs = { ...DEFAULT_MODEL_ARGS, contextLength: 16, dModel: 16, nHeads: 2, dMlp: 24 };
const SEQ = [BOS, ...observationTokens([{ input: 1, output: 3 }]).slice(1), tokenId('x'), tokenId('+')];

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** Parameters moved off their initial values (biases and gains too), so every tensor matters. */
async function trainedLike(args: ModelArgs, seed: number): Promise<PolicyTensors> {
  const params = initParams(args, seed);
  const tensors = await readPolicyTensors(params);
  tf.dispose([...params.values()]);
  let s = seed * 7919;
  for (const t of tensors.values())
    for (let i = 0; i < t.values.length; i++) {
      s = (s * 1103515245 + 12345) % 2147483648;
      t.values[i] = (t.values[i] as number) + (s / 2147483648 - 0.5) * 0.2;
    }
  return tensors;
}

async function logitsOf(params: Params, args: ModelArgs, seq: number[]): Promise<Float32Array> {
  const tokens = tf.tensor2d([seq], [1, seq.length], 'int32');
  const { logits, values } = forward(params, args, tokens);
  const out = (await logits.data()) as Float32Array;
  tf.dispose([tokens, logits, values]);
  return out;
}

/**
 * GPT2LMHeadModel's forward pass in plain arithmetic, read off the transformers keys as transformers
 * reads them (Conv1D is x @ W + b, W [in, out]; q, k, v chunks of c_attn's output; heads contiguous;
 * scores / √d_head; quick_gelu; ln ε 1e-5; logits = h @ lm_headᵀ). It checks the mapping's meaning,
 * not just that our own reader undoes our writer.
 */
function referenceGpt2(st: Map<string, RawTensor>, args: ModelArgs, seq: number[]): Float32Array {
  const W = (k: string) => {
    const t = st.get(k);
    if (!t) throw new Error(`no ${k}`);
    return f32Values(t);
  };
  const { dModel: D, nHeads: H, nLayers: L, vocabSize: V, dMlp: M } = args;
  const T = seq.length;
  const Dh = D / H;
  const ln = (x: number[], g: Float32Array, b: Float32Array) => {
    const mu = x.reduce((a, v) => a + v, 0) / x.length;
    const varc = x.reduce((a, v) => a + (v - mu) ** 2, 0) / x.length;
    return x.map((v, i) => ((v - mu) / Math.sqrt(varc + 1e-5)) * (g[i] as number) + (b[i] as number));
  };
  const conv1d = (x: number[], w: Float32Array, b: Float32Array, nOut: number) =>
    Array.from({ length: nOut }, (_, j) =>
      x.reduce((a, v, i) => a + v * (w[i * nOut + j] as number), b[j] as number),
    );
  const wte = W('transformer.wte.weight');
  const wpe = W('transformer.wpe.weight');
  let h = seq.map((tok, t) =>
    Array.from({ length: D }, (_, d) => (wte[tok * D + d] as number) + (wpe[t * D + d] as number)),
  );
  for (let l = 0; l < L; l++) {
    const p = `transformer.h.${l}.`;
    const qkv = h.map((x) =>
      conv1d(
        ln(x, W(`${p}ln_1.weight`), W(`${p}ln_1.bias`)),
        W(`${p}attn.c_attn.weight`),
        W(`${p}attn.c_attn.bias`),
        3 * D,
      ),
    );
    const ctx = h.map(() => new Array<number>(D).fill(0));
    for (let hd = 0; hd < H; hd++)
      for (let t = 0; t < T; t++) {
        const q = (qkv[t] as number[]).slice(hd * Dh, (hd + 1) * Dh);
        const scores = Array.from(
          { length: t + 1 },
          (_, s) =>
            q.reduce((a, v, i) => a + v * ((qkv[s] as number[])[D + hd * Dh + i] as number), 0) /
            Math.sqrt(Dh),
        );
        const mx = Math.max(...scores);
        const e = scores.map((v) => Math.exp(v - mx));
        const z = e.reduce((a, v) => a + v, 0);
        const row = ctx[t] as number[];
        for (let s = 0; s <= t; s++)
          for (let i = 0; i < Dh; i++)
            row[hd * Dh + i] =
              (row[hd * Dh + i] as number) +
              ((e[s] as number) / z) * ((qkv[s] as number[])[2 * D + hd * Dh + i] as number);
      }
    h = h.map((x, t) => {
      const a = conv1d(ctx[t] as number[], W(`${p}attn.c_proj.weight`), W(`${p}attn.c_proj.bias`), D);
      const r = x.map((v, i) => v + (a[i] as number));
      const m = conv1d(
        ln(r, W(`${p}ln_2.weight`), W(`${p}ln_2.bias`)),
        W(`${p}mlp.c_fc.weight`),
        W(`${p}mlp.c_fc.bias`),
        M,
      ).map((v) => v / (1 + Math.exp(-1.702 * v)));
      const o = conv1d(m, W(`${p}mlp.c_proj.weight`), W(`${p}mlp.c_proj.bias`), D);
      return r.map((v, i) => v + (o[i] as number));
    });
  }
  const head = W('lm_head.weight'); // [V, D]
  const out = new Float32Array(T * V);
  h.forEach((x, t) => {
    const f = ln(x, W('transformer.ln_f.weight'), W('transformer.ln_f.bias'));
    for (let v = 0; v < V; v++)
      out[t * V + v] = f.reduce((a, xv, d) => a + xv * (head[v * D + d] as number), 0);
  });
  return out;
}

const maxAbsDiff = (a: Float32Array, b: Float32Array) =>
  a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b[i] as number))), 0);
const text = (files: ModelFiles, name: string) =>
  JSON.parse(new TextDecoder().decode(files.get(name))) as Record<string, unknown>;

describe('exportHfGpt2', () => {
  it('writes a GPT-2 config, the transformers keys and the head transposed, without the value head', async () => {
    const tensors = await trainedLike(small, 1);
    const files = exportHfGpt2(small, tensors, { step: '3' });
    expect([...files.keys()].sort()).toEqual([
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    const config = text(files, 'config.json');
    expect(config).toMatchObject({
      model_type: 'gpt2',
      architectures: ['GPT2LMHeadModel'],
      vocab_size: VOCAB_SIZE,
      n_positions: 16,
      n_embd: 16,
      n_layer: 2,
      n_head: 2,
      n_inner: 24,
      activation_function: 'quick_gelu',
      layer_norm_epsilon: 1e-5,
      tie_word_embeddings: false,
    });
    const st = readSafetensors(files.get('model.safetensors') as Uint8Array);
    expect(st.metadata).toEqual({ step: '3', format: 'pt' });
    expect(st.tensors.size).toBe(2 + 2 * 12 + 2 + 1);
    expect([...st.tensors.keys()].some((k) => k.includes('value'))).toBe(false);
    expect(st.tensors.get('lm_head.weight')?.shape).toEqual([VOCAB_SIZE, 16]);
    expect(st.tensors.get('transformer.h.1.attn.c_attn.weight')?.shape).toEqual([16, 48]);
    // lm_head.weight[v][d] = head.w[d][v].
    const head = f32Values(st.tensors.get('lm_head.weight') as RawTensor);
    const ours = tensors.get('head.w')?.values as Float32Array;
    expect(head[5 * 16 + 3]).toBe(ours[3 * VOCAB_SIZE + 5]);
  });

  it('computes the logits of a GPT-2 read by transformers rules (a reference forward pass)', async () => {
    const tensors = await trainedLike(small, 2);
    const st = readSafetensors(exportHfGpt2(small, tensors).get('model.safetensors') as Uint8Array);
    const params = paramsFromTensors(tensors);
    const ours = await logitsOf(params, small, SEQ);
    const ref = referenceGpt2(st.tensors, small, SEQ);
    expect(maxAbsDiff(ours, ref)).toBeLessThan(1e-4);
    // Not trivially: the logits vary across tokens and positions.
    expect(Math.max(...ours) - Math.min(...ours)).toBeGreaterThan(0.5);
    tf.dispose([...params.values()]);
  });

  it('writes a tied policy as a GPT-2 that ties lm_head to wte, with the logits of a reference pass', async () => {
    const tied: ModelArgs = { ...small, tieEmbeddings: true };
    const tensors = await trainedLike(tied, 9);
    const files = exportHfGpt2(tied, tensors);
    expect(text(files, 'config.json').tie_word_embeddings).toBe(true);
    const st = readSafetensors(files.get('model.safetensors') as Uint8Array);
    expect(st.tensors.size).toBe(2 + 2 * 12 + 2 + 1);
    const wte = f32Values(st.tensors.get('transformer.wte.weight') as RawTensor);
    expect(st.tensors.get('lm_head.weight')?.shape).toEqual([VOCAB_SIZE, 16]);
    expect(f32Values(st.tensors.get('lm_head.weight') as RawTensor)).toEqual(wte);
    expect(wte).toEqual(tensors.get('tok_emb')?.values);
    const params = paramsFromTensors(tensors);
    const ours = await logitsOf(params, tied, SEQ);
    expect(maxAbsDiff(ours, referenceGpt2(st.tensors, tied, SEQ))).toBeLessThan(1e-4);
    expect(Math.max(...ours) - Math.min(...ours)).toBeGreaterThan(0.5);
    tf.dispose([...params.values()]);
  });

  it('refuses a policy with the copy head, saying why', async () => {
    const args = { ...small, pointerDim: 8 };
    expect(hfGpt2Refusal(args)).toMatch(/copy \(pointer\) head \(pointerDim 8\).*stock GPT2LMHeadModel/);
    expect(hfGpt2Refusal(small)).toBeNull();
    const tensors = await trainedLike(args, 3);
    expect(() => exportHfGpt2(args, tensors)).toThrow(/not exported as GPT-2: the policy has a copy/);
  });

  it('refuses tensors that are not its args’ model', async () => {
    const tensors = await trainedLike(small, 4);
    tensors.delete('h1.mlp.b2');
    expect(() => exportHfGpt2(small, tensors)).toThrow(/no parameter h1.mlp.b2/);
  });

  it('writes a word-level tokenizer of our vocabulary and a chat template of our observation text', async () => {
    const files = exportHfGpt2(small, await trainedLike(small, 5));
    const tok = text(files, 'tokenizer.json') as {
      model: { vocab: Record<string, number> };
      pre_tokenizer: unknown;
    };
    expect(Object.keys(tok.model.vocab).length).toBe(VOCAB_SIZE);
    expect(tok.model.vocab['f(']).toBe(tokenId('f('));
    expect(tok.pre_tokenizer).toEqual({ type: 'WhitespaceSplit' });
    expect(text(files, 'tokenizer_config.json').chat_template).toContain("'<bos>'");
    expect(text(files, 'generation_config.json').eos_token_id).toEqual([
      tokenId('<run>'),
      tokenId('<submit>'),
    ]);
    expect(
      renderChat([
        { role: 'user', content: 'f( 1 )= 3' },
        { role: 'assistant', content: 'x + 2 <run>' },
      ]),
    ).toBe('<bos> f( 1 )= 3 <sep> x + 2 <run>');
    expect(SEP).toBe(tokenId('<sep>'));
  });
});

describe('importHfGpt2', () => {
  it('reads an exported folder back: identical weights (the value head at zero) and identical logits', async () => {
    const tensors = await trainedLike(small, 6);
    const back = importHfGpt2(exportHfGpt2(small, tensors));
    expect(back.args).toEqual(small);
    for (const [name, t] of tensors) {
      const b = back.tensors.get(name);
      expect(b?.shape).toEqual(t.shape);
      if (name.startsWith('value.')) expect(b?.values.every((v) => v === 0)).toBe(true);
      else expect(b?.values).toEqual(t.values);
    }
    const a = paramsFromTensors(tensors);
    const b = paramsFromTensors(back.tensors);
    expect(await logitsOf(b, small, SEQ)).toEqual(await logitsOf(a, small, SEQ));
    tf.dispose([...a.values(), ...b.values()]);
  });

  const withFile = (files: ModelFiles, name: string, bytes: Uint8Array | null) => {
    const out = new Map(files);
    if (bytes) out.set(name, bytes);
    else out.delete(name);
    return out;
  };
  const withConfig = (files: ModelFiles, patch: Record<string, unknown>) =>
    withFile(
      files,
      'config.json',
      new TextEncoder().encode(JSON.stringify({ ...text(files, 'config.json'), ...patch })),
    );
  const withTensors = (files: ModelFiles, edit: (m: Map<string, RawTensor>) => void) => {
    const st = readSafetensors(files.get('model.safetensors') as Uint8Array);
    edit(st.tensors);
    return withFile(files, 'model.safetensors', writeSafetensors(st.tensors, st.metadata));
  };

  it('refuses a folder that is wrong, saying what is wrong', async () => {
    const files = exportHfGpt2(small, await trainedLike(small, 7));
    expect(() => importHfGpt2(withFile(files, 'model.safetensors', null))).toThrow(/no model.safetensors/);
    expect(() => importHfGpt2(withFile(files, 'tokenizer.json', null))).toThrow(/no tokenizer.json/);
    expect(() => importHfGpt2(withConfig(files, { vocab_size: 50257 }))).toThrow(
      /vocab_size 50257 is not our vocabulary/,
    );
    expect(() => importHfGpt2(withConfig(files, { activation_function: 'gelu_new' }))).toThrow(
      /"gelu_new"; .*quick_gelu/,
    );
    expect(() => importHfGpt2(withConfig(files, { model_type: 'llama' }))).toThrow(/not gpt2/);
    expect(() => importHfGpt2(withConfig(files, { n_embd: 32 }))).toThrow(
      /wte.weight has shape \[41, 16\], config.json implies \[41, 32\]/,
    );
    const tok = text(files, 'tokenizer.json') as { model: { vocab: Record<string, number> } };
    tok.model.vocab = { ...tok.model.vocab, x: 11, '0': 15 };
    expect(() =>
      importHfGpt2(withFile(files, 'tokenizer.json', new TextEncoder().encode(JSON.stringify(tok)))),
    ).toThrow(/maps "0" to 15; our vocabulary's id is 5/);
    expect(() => importHfGpt2(withTensors(files, (m) => m.delete('transformer.h.0.mlp.c_fc.bias')))).toThrow(
      /no transformer.h.0.mlp.c_fc.bias/,
    );
    expect(() =>
      importHfGpt2(
        withTensors(files, (m) =>
          m.set('transformer.ln_f.bias', { dtype: 'F16', shape: [16], bytes: new Uint8Array(32) }),
        ),
      ),
    ).toThrow(/ln_f.bias is F16; the policy reads F32 only/);
    expect(() =>
      importHfGpt2(
        withTensors(files, (m) => m.set('transformer.extra', f32Tensor([1], new Float32Array(1)))),
      ),
    ).toThrow(/tensors GPT-2 of this config has not: transformer.extra/);
    const st = files.get('model.safetensors') as Uint8Array;
    expect(() => importHfGpt2(withFile(files, 'model.safetensors', st.subarray(0, st.length - 4)))).toThrow(
      /model.safetensors is truncated/,
    );
  });

  it('reads keys without the transformer. prefix and a head tied to the embedding, as a tied policy', async () => {
    const tensors = await trainedLike(small, 8);
    const files = exportHfGpt2(small, tensors);
    const bare = withTensors(files, (m) => {
      for (const [k, v] of [...m]) {
        m.delete(k);
        if (k !== 'lm_head.weight') m.set(k.replace(/^transformer\./, ''), v);
      }
    });
    // No lm_head.weight: tied when config.json says so or says nothing (transformers' default).
    expect(() => importHfGpt2(bare)).toThrow(/no lm_head.weight and config.json does not tie it/);
    for (const patch of [{ tie_word_embeddings: true }, { tie_word_embeddings: undefined }]) {
      const back = importHfGpt2(withConfig(bare, patch));
      expect(back.args).toEqual({ ...small, tieEmbeddings: true });
      expect(back.tensors.has('head.w')).toBe(false);
      expect(back.tensors.get('h0.attn.wqkv')?.values).toEqual(tensors.get('h0.attn.wqkv')?.values);
      expect(back.tensors.get('tok_emb')?.values).toEqual(tensors.get('tok_emb')?.values);
    }
  });

  it('reads a tied export back tied, with identical logits, and refuses an lm_head unlike wte', async () => {
    const tied: ModelArgs = { ...small, tieEmbeddings: true };
    const tensors = await trainedLike(tied, 10);
    const files = exportHfGpt2(tied, tensors);
    const back = importHfGpt2(files);
    expect(back.args).toEqual(tied);
    expect([...back.tensors.keys()].sort()).toEqual([...tensors.keys()].sort());
    const a = paramsFromTensors(tensors);
    const b = paramsFromTensors(back.tensors);
    expect(await logitsOf(b, tied, SEQ)).toEqual(await logitsOf(a, tied, SEQ));
    tf.dispose([...a.values(), ...b.values()]);
    const other = withTensors(files, (m) => {
      const head = f32Values(m.get('lm_head.weight') as RawTensor).map((v) => v + 1);
      m.set('lm_head.weight', f32Tensor([VOCAB_SIZE, 16], head));
    });
    expect(() => importHfGpt2(other)).toThrow(
      /ties lm_head to the embedding, but .* unlike transformer.wte.weight/,
    );
  });
});
