/**
 * Cases for `cluster/check_reward.py` (DESIGN §14): turns played by the page's `Episode` with the
 * real QuickJS sandbox, each with the outputs, error kind, tests passed and reward the page gave,
 * so that the Python reward (`cluster/sandbox_reward.py`) can be held to them.
 *
 *   npx tsx e2e/bench/reward-parity.ts [--out bench-results/export/reward-cases.jsonl]
 *     [--random 3000] [--seed 1]
 *
 * Programs: every legal program of up to 3 tokens, `--random` random legal programs of up to 40
 * tokens, hand-written hard cases (overflow, NaN, -0, booleans, deep nesting), random token strings
 * the grammar mostly refuses, and the sandbox's hostile corpus (`sandbox/corpus.ts`: programs the
 * page cannot write). Tasks: the built-in tasks of both kinds with their generalisation tasks, and
 * stress tasks with huge, fractional and negative inputs. Each legal program is submitted, and one
 * in four run instead (a one-turn episode: the run ends it without a submit). 300 long random
 * programs and one legal program in seven also carry the legal tokens before each token (the
 * grammar mask `train_trl.py` samples with).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DEFAULT_ENV_CONFIG, MAX_DEADLINE_MS, type EnvConfig } from '../../src/lib/env/config.ts';
import { Episode } from '../../src/lib/env/episode.ts';
import {
  advance,
  legalProgramTokens,
  parseProgram,
  programsOfLength,
  START,
} from '../../src/lib/env/grammar.ts';
import { kindOf, type Example, type Task } from '../../src/lib/env/suite.ts';
import { builtInTasks, envConfigOf, generalisationOf } from '../../src/lib/env/task-kinds.ts';
import { sourceToTokens } from '../../src/lib/env/tokenizer.ts';
import {
  PROGRAM_TOKENS,
  RUN,
  SUBMIT,
  tokenId,
  tokenText,
  type ProgramToken,
} from '../../src/lib/env/vocab.ts';
import { Rng } from '../../src/lib/random.ts';
import { CONTRACT } from '../../src/lib/sandbox/corpus.ts';
import { createNodeQuickJS } from '../../src/lib/sandbox/quickjs-node.ts';
import { flag } from './node-kit.ts';

const OUT = flag('out', 'bench-results/export/reward-cases.jsonl');
const RANDOM = Number(flag('random', '3000'));
const SEED = Number(flag('seed', '1'));
/** Program tokens a turn may hold here (the page's default is 11): long programs stress the parser. */
const MAX_PROGRAM = 40;

const rng = new Rng(SEED);
const stress = (id: string, inputs: number[]): Task => {
  const ex = (input: number): Example => ({ input, output: input * 3 - 1 });
  return { id, level: 'easy', examples: inputs.slice(0, 3).map(ex), hidden: inputs.map(ex) };
};
const tasks: Task[] = [
  ...(['examples', 'tooluse'] as const).flatMap((k) => {
    const built = builtInTasks(k, SEED);
    return [...built, ...generalisationOf(built)];
  }),
  stress('stress:huge', [1e300, -1e300, 999999, 2 ** 53 + 2, 7]),
  stress('stress:fractions', [0.1, -0.5, 2.5, 1 / 3, -7]),
  stress('stress:signs', [0, -1, -7, 13, -999]),
];

/** A random legal program: tokens the grammar allows, ending where it may with chance `end`. */
function randomProgram(end = 0.25): string {
  let s = START;
  let text = '';
  for (;;) {
    const budget = MAX_PROGRAM + 1 - s.length;
    const next = legalProgramTokens(s, budget);
    const canEnd = !s.expectOperand && s.open.length === 0;
    if (canEnd && (next.length === 0 || rng.next() < end)) return text;
    const t = rng.pick(next);
    s = advance(s, t) ?? s;
    text += t;
  }
}

const HARD = [
  'x%0',
  '0%0',
  '-0',
  'x*0-0',
  '-x%7',
  'x%-7',
  '-(x%3)',
  'x>1',
  '(x>1)+(x<2)',
  '(x>1)*7-(x<0)',
  '-(x>0)',
  'x<1<2',
  'x>2>0',
  '(x>0)%2',
  'x%(x>5)',
  'x?1:2',
  'x-x?5:6',
  'x%2?x:-x',
  'x>1?x<5?1:2:3',
  'x?x>3:0',
  '1?2:3?4:5',
  '(x?0:1)?7:8',
  'x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x',
  'x*x-x*x',
  'x*x*x*x*x*x*x*x*x*x*x*x*x*x*x*x%x',
  '999*999*999*999*999*999*999*999*999*999',
  '((((((((((((((((((x))))))))))))))))))',
  '-(-(-(-(-(-(-(-(-(-(x))))))))))',
  'x*3-1',
  '0',
  '999',
];

/** Random strings of program tokens: mostly illegal (`x--1`, `07`, `1234`, `x+`, `(x`). */
function randomTokens(): string {
  const n = 1 + rng.int(8);
  return Array.from({ length: n }, () => rng.pick(PROGRAM_TOKENS)).join('');
}

/** The page's view of a program: its tokens when the grammar lets the policy write it, else null. */
function legalTokens(program: string): ProgramToken[] | null {
  try {
    const tokens = sourceToTokens(program);
    parseProgram(tokens);
    return tokens.length <= MAX_PROGRAM ? tokens : null;
  } catch {
    return null;
  }
}

const programs = new Set<string>();
for (let n = 1; n <= 3; n++) for (const p of programsOfLength(n)) programs.add(p);
for (const p of HARD) programs.add(p);
for (let i = 0; i < RANDOM; i++) programs.add(randomProgram());
// Long ones, which meet the turn's budget: the grammar mask must leave room to finish.
const long = new Set(Array.from({ length: 300 }, () => randomProgram(0.02)));
for (const p of long) programs.add(p);
for (let i = 0; i < 400; i++) programs.add(randomTokens());
for (const c of CONTRACT) programs.add(c.request.code);

const sandbox = await createNodeQuickJS();
const rows: string[] = [];
let legal = 0;
for (const program of programs) {
  const task = rng.pick(tasks);
  const kind = kindOf(task);
  const tokens = legalTokens(program);
  const action = rng.next() < 0.25 ? 'run' : 'submit';
  if (!tokens) {
    // The page cannot write it: the Python reward must refuse it without running it.
    rows.push(JSON.stringify({ program, action, kind, legal: false, hidden: task.hidden, shown: [] }));
    continue;
  }
  legal += 1;
  const config: EnvConfig = {
    ...envConfigOf(kind),
    maxTurns: 1,
    maxTokensPerTurn: MAX_PROGRAM + 1,
    contextLength: DEFAULT_ENV_CONFIG.contextLength + MAX_PROGRAM,
    allowRunOnLastTurn: true,
    autoRun: false,
    // Programs of the grammar always finish; the 50 ms default could time out on a loaded machine.
    limits: { deadlineMs: MAX_DEADLINE_MS },
  };
  const episode = new Episode(task, config);
  // Long programs and one in seven others also carry the page's legal tokens before each token.
  const masks: { budget: number; legal: string[] }[] = [];
  const mask = () => {
    if (long.has(program) || legal % 7 === 0)
      masks.push({ budget: episode.budget, legal: episode.legalTokens().map(tokenText) });
  };
  for (const t of tokens) {
    mask();
    await episode.step(tokenId(t), sandbox);
  }
  mask();
  await episode.step(action === 'run' ? RUN : SUBMIT, sandbox);
  const turn = episode.turns[0];
  if (!turn || !episode.done) throw new Error(`${program}: the episode did not end in one turn`);
  const shown = kind === 'tooluse' ? (task.tests ?? episode.shown) : episode.shown;
  rows.push(
    JSON.stringify({
      program,
      action,
      kind,
      legal: true,
      hidden: task.hidden,
      shown,
      outputs: turn.outputs ?? null,
      error: turn.error ?? null,
      passed: turn.passed ?? 0,
      reward: episode.parts.total,
      ...(masks.length ? { masks } : {}),
    }),
  );
}
sandbox.dispose();
mkdirSync(path.dirname(OUT), { recursive: true });
writeFileSync(OUT, rows.map((r) => `${r}\n`).join(''));
console.log(
  JSON.stringify({ out: OUT, cases: rows.length, legal, refused: rows.length - legal, tasks: tasks.length }),
);
