import type { Sandbox, SandboxErrorKind } from '../sandbox/types';
import { DEFAULT_ENV_CONFIG, type EnvConfig } from './config';
import { advance, complete, legalProgramTokens, START, type GrammarState } from './grammar';
import { kindOf, type Example, type Task } from './suite';
import {
  MAX_REPORTED_FAILURES,
  testReport,
  testReportTokens,
  truncateReport,
  type TestReport,
} from './test-report';
import { feedbackTokens, observationTokens, sourceToTokens } from './tokenizer';
import { RUN, SUBMIT, tokenId, tokenText, VOCAB_SIZE, type ProgramToken } from './vocab';

/** Why an episode ended: a submit, out of turns, or out of context. */
export type StopReason = 'submit' | 'turns' | 'context';

/** Signed contributions to an episode's return; `total` is their sum. */
export interface RewardParts {
  pass: number;
  ranOk: number;
  closeness: number;
  turnCost: number;
  noSubmit: number;
  total: number;
}

/** One turn: the program, what ran it, and what came back. */
export interface TurnRecord {
  action: 'run' | 'submit';
  program: string;
  /** Outputs when every call returned a finite number. */
  outputs?: number[];
  error?: SandboxErrorKind;
  /** Hidden tests passed (submit only). */
  passed?: number;
  /** The task's tests passed (a run of a tool-use task only). */
  testsPassed?: number;
  /** The report a run of a tool-use task appended, as the policy read it (absent when it did not fit). */
  report?: TestReport;
  /** A run the environment made of the first program (`EnvConfig.autoRun`), not the policy's choice. */
  auto?: true;
  /** Reward paid at this turn's control token. */
  reward: number;
}

/** The JavaScript a program runs as (DESIGN §3): `(x) => (EXPR)`, named `f` for the sandbox. */
export const programCode = (expr: string): string => `const f = (x) => (${expr});`;

const zeroParts = (): RewardParts => ({
  pass: 0,
  ranOk: 0,
  closeness: 0,
  turnCost: 0,
  noSubmit: 0,
  total: 0,
});

/**
 * One episode of the code-writing environment: `new Episode(task)` is `reset(task)`; the policy
 * then calls `legalMask()` and `step(token)` until `done`. Programs run only through the
 * `Sandbox` given to `step`, never through `eval`.
 */
export class Episode {
  /** The whole token sequence: observation, the policy's tokens, feedback. */
  readonly tokens: number[];
  /** 1 where the policy wrote the token (its loss mask), 0 for observation and feedback. */
  readonly owned: number[];
  /** Reward paid after each token (non-zero only at control tokens). */
  readonly rewards: number[];
  readonly turns: TurnRecord[] = [];
  readonly parts: RewardParts = zeroParts();
  /** The examples shown (and run by `<run>`): as many of the task's as fit in the context. */
  readonly shown: readonly Example[];
  /** Length of the first observation, in tokens. */
  readonly promptLength: number;
  done = false;
  stop: StopReason | null = null;
  /** Wall ms of the sandbox's runs of this episode's programs (0 for a cached result). */
  sandboxMs = 0;
  private grammar: GrammarState = START;
  private program: ProgramToken[] = [];

  constructor(
    readonly task: Task,
    readonly config: EnvConfig = DEFAULT_ENV_CONFIG,
  ) {
    const room = config.contextLength - Math.min(config.maxTokensPerTurn, config.contextLength);
    let shown = task.examples.length;
    while (shown > 1 && observationTokens(task.examples.slice(0, shown)).length > room) shown -= 1;
    this.shown = task.examples.slice(0, shown);
    this.tokens = observationTokens(this.shown);
    if (this.tokens.length + 2 > config.contextLength) {
      throw new Error(
        `task ${task.id}: its first example takes ${this.tokens.length} tokens; a context of ${config.contextLength} leaves no room for a program`,
      );
    }
    this.promptLength = this.tokens.length;
    this.owned = this.tokens.map(() => 0);
    this.rewards = this.tokens.map(() => 0);
    if (task.opening) this.open(task.opening);
  }

  /**
   * Plays a tool-use task's opening as the environment's own first turn (none of its tokens the
   * policy's): the program, `<run>`, and the report of its given outputs on the tests.
   */
  private open({ program, outputs }: { program: string; outputs: number[] }): void {
    const tests = this.task.tests ?? [];
    if (kindOf(this.task) !== 'tooluse' || this.config.maxTurns < 2 || outputs.length !== tests.length)
      throw new Error(
        `task ${this.task.id}: an opening needs a tool-use task, two turns, and an output per test`,
      );
    const ids = [...sourceToTokens(program).map(tokenId), RUN];
    const report = testReport(tests, { outputs }, this.config.reportFailures ?? MAX_REPORTED_FAILURES);
    const feedback = testReportTokens(report);
    if (this.tokens.length + ids.length + feedback.length + 2 > this.config.contextLength)
      throw new Error(`task ${this.task.id}: its opening does not fit the context`);
    for (const t of [...ids, ...feedback]) this.push(t, 0);
    const reward = this.pay('turnCost', -this.config.reward.turnCost);
    this.turns.push({
      action: 'run',
      program,
      outputs,
      testsPassed: report.passed,
      report,
      reward,
      auto: true,
    });
  }

  /** Turns that ended with `<run>`. */
  get runs(): number {
    return this.turns.filter((t) => t.action === 'run').length;
  }

  /** Runs the policy chose (the automatic first run left out). */
  get policyRuns(): number {
    return this.turns.filter((t) => t.action === 'run' && !t.auto).length;
  }

  /** Whether the turn being written must end with `<run>`: the first turn of a tool-use task under `autoRun`. */
  get mustRun(): boolean {
    return (
      this.config.autoRun &&
      this.turns.length === 0 &&
      this.config.maxTurns > 1 &&
      kindOf(this.task) === 'tooluse'
    );
  }

  /** True when every hidden test passed on submit. */
  get solved(): boolean {
    const last = this.turns[this.turns.length - 1];
    return last?.action === 'submit' && last.passed === this.task.hidden.length;
  }

  /** Tokens the policy may still write in this turn, the control token included. */
  get budget(): number {
    const inTurn = this.config.maxTokensPerTurn - this.program.length;
    return Math.min(inTurn, this.config.contextLength - this.tokens.length);
  }

  /** Ids of the tokens legal at the next position (empty once done). */
  legalTokens(): number[] {
    if (this.done) return [];
    const ids = legalProgramTokens(this.grammar, this.budget).map(tokenId);
    if (complete(this.grammar)) {
      const lastTurn = this.turns.length + 1 === this.config.maxTurns;
      if (!lastTurn || this.config.allowRunOnLastTurn) ids.push(RUN);
      if (!this.mustRun) ids.push(SUBMIT);
    }
    return ids.sort((a, b) => a - b);
  }

  /** 1 for each legal token id, 0 elsewhere (length `VOCAB_SIZE`). */
  legalMask(): Uint8Array {
    const mask = new Uint8Array(VOCAB_SIZE);
    for (const id of this.legalTokens()) mask[id] = 1;
    return mask;
  }

  /** The policy writes `token`; a control token runs the program. Returns the reward paid. */
  async step(token: number, sandbox: Sandbox): Promise<{ reward: number; done: boolean }> {
    if (this.done) throw new Error('step on a finished episode');
    if (!this.legalTokens().includes(token)) {
      throw new Error(`token ${tokenText(token)} is not legal after ${JSON.stringify(this.programText)}`);
    }
    this.push(token, 1);
    if (token !== RUN && token !== SUBMIT) {
      const t = tokenText(token) as ProgramToken;
      this.program.push(t);
      this.grammar = advance(this.grammar, t) ?? this.grammar;
      return { reward: 0, done: false };
    }
    const reward = await this.endTurn(token === SUBMIT ? 'submit' : 'run', sandbox);
    return { reward, done: this.done };
  }

  /** The program written so far in this turn. */
  get programText(): string {
    return this.program.join('');
  }

  private push(token: number, owned: number): void {
    this.tokens.push(token);
    this.owned.push(owned);
    this.rewards.push(0);
  }

  private pay(part: Exclude<keyof RewardParts, 'total'>, amount: number): number {
    this.parts[part] += amount;
    this.parts.total += amount;
    this.rewards[this.rewards.length - 1] = (this.rewards[this.rewards.length - 1] ?? 0) + amount;
    return amount;
  }

  private async endTurn(action: 'run' | 'submit', sandbox: Sandbox): Promise<number> {
    const w = this.config.reward;
    const program = this.programText;
    const toolUse = kindOf(this.task) === 'tooluse';
    const tests =
      action === 'submit' ? this.task.hidden : toolUse ? (this.task.tests ?? this.shown) : this.shown;
    const result = await sandbox.run({
      code: programCode(program),
      inputs: tests.map((t) => t.input),
      limits: this.config.limits,
    });
    this.sandboxMs += result.ms;
    const outputs = result.ok ? numericOutputs(result.outputs) : null;
    const error: SandboxErrorKind | undefined = result.ok
      ? outputs
        ? undefined
        : 'output'
      : (result.error?.kind ?? 'internal');
    const turn: TurnRecord = { action, program, reward: 0, ...(this.mustRun ? { auto: true as const } : {}) };
    if (outputs) turn.outputs = outputs;
    if (error) turn.error = error;
    let reward = this.pay('turnCost', -w.turnCost);
    if (outputs) reward += this.pay('ranOk', w.ranOk);
    this.program = [];
    this.grammar = START;
    if (action === 'submit') {
      const passed = outputs ? outputs.filter((y, i) => y === tests[i]?.output).length : 0;
      const close = outputs
        ? mean(outputs.map((y, i) => 1 / (1 + Math.abs(y - (tests[i]?.output ?? 0)))))
        : 0;
      turn.passed = passed;
      reward += this.pay('pass', (w.pass * passed) / Math.max(1, tests.length));
      reward += this.pay('closeness', w.closeness * close);
      this.finish('submit');
    } else {
      const ran = outputs ? { outputs } : { error: error ?? 'internal' };
      let feedback: number[];
      if (toolUse) {
        const report = testReport(tests, ran, this.config.reportFailures ?? MAX_REPORTED_FAILURES);
        turn.testsPassed = report.passed;
        // Fewer failing tests when the context has no room for them all (the counts always show).
        let fit = report.failures.length;
        let shownReport = report;
        feedback = testReportTokens(report);
        while (fit > 0 && this.tokens.length + feedback.length + 2 > this.config.contextLength) {
          fit -= 1;
          shownReport = truncateReport(report, fit);
          feedback = testReportTokens(shownReport);
        }
        if (this.tokens.length + feedback.length + 2 <= this.config.contextLength) turn.report = shownReport;
      } else feedback = feedbackTokens(ran);
      if (this.tokens.length + feedback.length + 2 > this.config.contextLength) {
        reward += this.finish('context');
      } else {
        for (const t of feedback) this.push(t, 0);
        if (this.turns.length + 1 >= this.config.maxTurns) reward += this.finish('turns');
      }
    }
    turn.reward = reward;
    this.turns.push(turn);
    return reward;
  }

  /** Ends the episode; returns the no-submit penalty it paid (0 on submit). */
  private finish(stop: StopReason): number {
    this.done = true;
    this.stop = stop;
    if (stop === 'submit') return 0;
    // The penalty belongs to the policy's last token (the `<run>` that used the last turn).
    const last = this.owned.lastIndexOf(1);
    const amount = -this.config.reward.noSubmit;
    this.parts.noSubmit += amount;
    this.parts.total += amount;
    this.rewards[last] = (this.rewards[last] ?? 0) + amount;
    return amount;
  }
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

/** Whether a run's output counts as an answer: a finite number (anything else fails the run, err:output). */
export const isAnswer = (y: unknown): y is number => typeof y === 'number' && Number.isFinite(y);

/** The outputs when every one is a finite number; null otherwise (a non-number result). */
function numericOutputs(outputs: unknown[] | undefined): number[] | null {
  if (!outputs || !outputs.every(isAnswer)) return null;
  return outputs;
}
