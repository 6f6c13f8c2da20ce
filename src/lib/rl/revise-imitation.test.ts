import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLUSE_ENV_CONFIG } from '../env/config';
import { PROBE_INPUTS } from '../env/decontaminate';
import { Episode, programCode } from '../env/episode';
import { toolUseGeneralisationTasks, generateToolUseTasks } from '../env/tooluse';
import { tokenText } from '../env/vocab';
import { Rng } from '../random';
import type { QuickJSSandbox } from '../sandbox/quickjs';
import { createNodeQuickJS } from '../sandbox/quickjs-node';
import {
  reviseBatch,
  reviseSequence,
  reviseSequences,
  wideToolUseTasks,
  wrongGuesses,
} from './revise-imitation';

let sandbox: QuickJSSandbox;
beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

const env = { ...TOOLUSE_ENV_CONFIG, autoRun: true, limits: { deadlineMs: 2000 } };
const tasks = generateToolUseTasks(1);
const heldOut = [...tasks.filter((t) => t.heldOut), ...toolUseGeneralisationTasks(tasks)];

describe('the revise warm start', () => {
  it('makes far more training functions than the built-in tasks, none computing a held-out or generalisation task', async () => {
    const wide = wideToolUseTasks(heldOut, ['easy', 'medium']);
    expect(wide.length).toBeGreaterThan(4 * tasks.filter((t) => !t.heldOut).length);
    expect(new Set(wide.map((t) => t.hidden.map((e) => e.output).join())).size).toBe(wide.length);
    // Checked in the sandbox, not by the generator's own arithmetic: outputs at every held-out task's inputs.
    for (const t of wide.filter((_, k) => k % 5 === 0)) {
      const r = await sandbox.run({
        code: programCode(t.program),
        inputs: [...PROBE_INPUTS],
        limits: { deadlineMs: 2000 },
      });
      const outputs = r.outputs as number[];
      for (const e of [...t.examples, ...(t.tests ?? []), ...t.hidden])
        expect(outputs[e.input]).toBe(e.output);
      for (const h of heldOut) {
        const all = [...h.examples, ...(h.tests ?? []), ...h.hidden];
        expect(all.every((e) => outputs[e.input] === e.output)).toBe(false);
      }
    }
  });

  it('guesses wrong first programs that fail a test: the copied number, other families through the example, near misses', () => {
    const t = tasks.find((x) => x.program === '3*x') ?? tasks.find((x) => x.family === 'a*x');
    if (!t) throw new Error('no a*x task');
    const guesses = wrongGuesses(t);
    const y = String(t.examples[0]?.output);
    expect(guesses).toContain(y);
    expect(guesses).not.toContain(t.program);
    expect(guesses.length).toBeGreaterThanOrEqual(3);
  });

  it('plays the first program, its real report, then the fix; the loss reads the fix, and the first guess only when it fits the example', async () => {
    const t = tasks.find((x) => x.family === 'x+b' && !x.heldOut);
    if (!t) throw new Error('no x+b task');
    const y = t.examples[0]?.output ?? 0;
    const targetsOf = async (first: string) => {
      const seq = await reviseSequence(t, first, env, sandbox);
      if (!seq) throw new Error(`no sequence from ${first}`);
      // It starts from the task's own observation.
      expect(seq.tokens.slice(0, new Episode(t, env).tokens.length)).toEqual(new Episode(t, env).tokens);
      expect(seq.reward).toBeGreaterThan(1);
      return {
        seq,
        text: seq.tokens
          .slice(1)
          .filter((_, i) => seq.target[i] === 1)
          .map(tokenText)
          .join(''),
      };
    };
    const miss = await targetsOf(`x+${y + 5}`); // f(1) = y + 6: misses the shown example
    expect(miss.text).toBe(`${t.program}<submit>`);
    const copy = await targetsOf(String(y));
    expect(copy.text).toBe(`${y}<run>${t.program}<submit>`);
    const b = reviseBatch([miss.seq], env.contextLength);
    expect(b.mask.reduce((s, m) => s + m, 0)).toBe(t.program.length + 1);
    // Every target token was legal where it stands.
    for (let i = 0; i < b.length; i++)
      if (b.mask[i]) expect(b.legal?.[i * (b.vocab ?? 0) + (b.actions[i] ?? 0)]).toBe(1);
  });

  it('draws a wrong or (at its share) the right first program per task, every sequence solved', async () => {
    const train = tasks.filter((t) => !t.heldOut && t.level === 'easy').slice(0, 12);
    const seqs = await reviseSequences(train, env, sandbox, new Rng(3), 0.25);
    expect(seqs.length).toBe(train.length);
    const right = seqs.filter((s) => s.first === s.task.program).length;
    expect(right).toBeGreaterThan(0);
    expect(right).toBeLessThan(seqs.length);
  });
});
