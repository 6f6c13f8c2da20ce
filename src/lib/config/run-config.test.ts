import { describe, expect, it } from 'vitest';
import { CodeJobSource } from './code-workload';
import { applyPreset, PRESETS } from './presets';
import {
  defaultRunConfig,
  MAX_LORA_RANK,
  MAX_SEED,
  policyReset,
  runConfigFromJson,
  runConfigToJson,
  validateRunConfig,
  withTaskKind,
  type RunConfig,
} from './run-config';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG } from '../env/config';

describe('run settings as stored JSON', () => {
  it('round-trips, unbounded η included', () => {
    const s = { ...defaultRunConfig(), eta: Infinity, workers: 2 };
    const back = runConfigFromJson(JSON.parse(JSON.stringify(runConfigToJson(s))) as Record<string, unknown>);
    expect(back).toEqual(s);
  });

  it('gives fields a stored run lacks their defaults, at every depth of the code config', () => {
    const base = defaultRunConfig();
    const stored = JSON.parse(JSON.stringify(runConfigToJson(base))) as {
      code: {
        learningRate: number;
        hindsight: Record<string, unknown>;
        env: { limits: Record<string, unknown> };
      };
    };
    stored.learner.learningRate = 0.001;
    delete stored.hindsight.taskFraction; // stored before the field existed
    stored.hindsight.samplesPerBatch = 8;
    delete stored.env.limits.deadlineMs; // two levels down
    const back0 = runConfigFromJson(stored as unknown as Record<string, unknown>);
    expect(back0.env.limits).toEqual(base.env.limits);
    const back = runConfigFromJson(stored as unknown as Record<string, unknown>);
    expect(back.learner.learningRate).toBe(0.001);
    expect(back.hindsight.samplesPerBatch).toBe(8);
    expect(back.hindsight.taskFraction).toBe(base.hindsight.taskFraction);
    // The code config starts a job source (which validates hindsight) as it is.
    const task = { id: 't', level: 'easy' as const, examples: [], hidden: [] };
    expect(() => new CodeJobSource([task], back.code)).not.toThrow();
  });
});

describe('a run stored before a field existed', () => {
  it('resumes at a constant rate, counting every attempt, as it trained; a newer run keeps its own', () => {
    const old = JSON.parse(JSON.stringify(runConfigToJson(defaultRunConfig()))) as {
      code: Record<string, unknown>;
    };
    delete old.learner.lrHalfLife;
    delete old.task.valueWindow;
    const back = runConfigFromJson(old as unknown as Record<string, unknown>);
    expect(back.learner.lrHalfLife).toBe(0);
    expect(back.task.valueWindow).toBe(0);
    // Everything else still takes today's defaults.
    const { lrHalfLife, valueWindow } = defaultRunConfig().code;
    expect({ ...back.code, lrHalfLife, valueWindow }).toEqual(defaultRunConfig().code);
    const now = runConfigToJson(defaultRunConfig());
    expect(runConfigFromJson(now).learner.lrHalfLife).toBe(lrHalfLife);
    expect(runConfigFromJson(now).task.valueWindow).toBe(valueWindow);
  });

  it('resumes a run stored before relabelled variants without them; a newer run keeps its own', () => {
    const old = JSON.parse(JSON.stringify(runConfigToJson(defaultRunConfig()))) as {
      code: { hindsight: Record<string, unknown> };
    };
    delete old.hindsight.mutations;
    const back = runConfigFromJson(old as unknown as Record<string, unknown>);
    expect(back.hindsight.mutations).toBe(0);
    expect(back.hindsight.samplesPerBatch).toBe(defaultRunConfig().hindsight.samplesPerBatch);
    expect(defaultRunConfig().hindsight.mutations).toBeGreaterThan(0);
    const now = runConfigToJson(defaultRunConfig());
    expect(runConfigFromJson(now).hindsight.mutations).toBe(defaultRunConfig().hindsight.mutations);
  });
});

describe('settings validation', () => {
  it('refuses values a run cannot use, naming the field', () => {
    const bad = (patch: Record<string, unknown>) => () =>
      validateRunConfig({ ...defaultRunConfig(), ...patch } as ReturnType<typeof defaultRunConfig>);
    expect(bad({})).not.toThrow();
    expect(bad({ loss: 'pg' })).toThrow(/the policy loss must be one of "decoupled", "ppo", got "pg"/);
    expect(bad({ code: { ...defaultRunConfig().code, estimator: 'mc' } })).toThrow(/advantage estimator/);
    expect(bad({ replay: { ...defaultRunConfig().replay, mode: 'lifo' } })).toThrow(/replay mode/);
    expect(bad({ level: 'expert' })).toThrow(/the level must be one of null, "easy"/);
    expect(bad({ seed: 1.5 })).toThrow(/seed must be an integer/);
    expect(bad({ preemptAfterMs: -1 })).toThrow(
      /preemptAfterMs must be an integer from 0 to 3600000, got -1/,
    );
    expect(bad({ code: { ...defaultRunConfig().code, tasksPerBatch: 0 } })).toThrow(/tasksPerBatch/);
  });
});

describe('LoRA in the run settings', () => {
  it('is off by default, round-trips when on, and a run stored before it existed trains every parameter', () => {
    expect(defaultRunConfig().lora).toBeNull();
    const s = { ...defaultRunConfig(), lora: { rank: 4, alpha: 8 } };
    const back = runConfigFromJson(JSON.parse(JSON.stringify(runConfigToJson(s))) as Record<string, unknown>);
    expect(back.lora).toEqual({ rank: 4, alpha: 8 });
    expect(policyReset(back)).toEqual({
      seed: 1,
      loss: 'decoupled',
      learningRate: s.learner.learningRate,
      maxGradNorm: 0.5,
      lora: s.lora,
    });
    const old = runConfigToJson(defaultRunConfig());
    delete old.lora;
    expect(runConfigFromJson(old).lora).toBeNull();
  });

  it('refuses a rank or alpha it cannot train with, saying which', () => {
    const withLora = (rank: number, alpha: number) => () =>
      validateRunConfig({ ...defaultRunConfig(), lora: { rank, alpha } });
    expect(withLora(4, 8)).not.toThrow();
    expect(withLora(0, 8)).toThrow(/LoRA rank must be an integer from 1 to 16, got 0/);
    expect(withLora(2.5, 8)).toThrow(/LoRA rank/);
    expect(withLora(MAX_LORA_RANK + 1, 8)).toThrow(/LoRA rank/);
    expect(withLora(4, 0)).toThrow(/LoRA alpha must be a positive number up to 256, got 0/);
    expect(withLora(4, NaN)).toThrow(/LoRA alpha/);
  });
});

describe('starting from a stored run', () => {
  it('is off by default and refuses a start point it cannot read, saying why', () => {
    expect(defaultRunConfig().startFrom).toBeNull();
    const from = (runId: string, version: number) => () =>
      validateRunConfig({ ...defaultRunConfig(), startFrom: { runId, version } });
    expect(from('run-1', 3)).not.toThrow();
    expect(from('', 3)).toThrow(/no run named/);
    expect(from('run-1', -1)).toThrow(/non-negative integer, got -1/);
    expect(from('run-1', 1.5)).toThrow(/non-negative integer/);
  });

  it('takes a built-in base by name, round-trips it, and refuses one the page does not ship', () => {
    const base = (name: string) => ({ ...defaultRunConfig(), startFrom: { base: name } }) as RunConfig;
    expect(() => validateRunConfig(base('easy-half'))).not.toThrow();
    const back = runConfigFromJson(JSON.parse(JSON.stringify(runConfigToJson(base('easy-half')))));
    expect(back.startFrom).toEqual({ base: 'easy-half' });
    expect(() => validateRunConfig(base('hard-full'))).toThrow(/no built-in base "hard-full"/);
    expect(() => validateRunConfig(base('constructor'))).toThrow(/no built-in base/);
  });
});

describe('the gradient clip in the run settings', () => {
  it('is 0.5 by default and for a run stored before it existed, and must be a positive number', () => {
    expect(defaultRunConfig().learner.maxGradNorm).toBe(0.5);
    const old = JSON.parse(JSON.stringify(runConfigToJson(defaultRunConfig()))) as {
      code: Record<string, unknown>;
    };
    delete old.learner.maxGradNorm;
    expect(runConfigFromJson(old).learner.maxGradNorm).toBe(0.5);
    const clip = (maxGradNorm: number) => () =>
      validateRunConfig({ ...defaultRunConfig(), code: { ...defaultRunConfig().code, maxGradNorm } });
    expect(clip(1000)).not.toThrow();
    expect(clip(0)).toThrow(/maxGradNorm \(the gradient clip\) must be a positive number/);
    expect(clip(NaN)).toThrow(/gradient clip/);
    expect(
      policyReset({ ...defaultRunConfig(), code: { ...defaultRunConfig().code, maxGradNorm: 1000 } })
        .maxGradNorm,
    ).toBe(1000);
  });
});

describe('the learning-rate schedule in the run settings', () => {
  it('accepts a constant rate or a half-life in versions, and nothing else', () => {
    const withHalfLife = (lrHalfLife: number) => () =>
      validateRunConfig({ ...defaultRunConfig(), code: { ...defaultRunConfig().code, lrHalfLife } });
    expect(withHalfLife(0)).not.toThrow();
    expect(withHalfLife(600)).not.toThrow();
    expect(withHalfLife(-1)).toThrow(/half-life must be 0 \(constant\) or a number of versions, got -1/);
    expect(withHalfLife(NaN)).toThrow(/half-life/);
    expect(withHalfLife(Infinity)).toThrow(/half-life/);
  });
});

/** `s` with the value at `path` (dot-separated, e.g. `code.env.reward.pass`) replaced by `value`. */
function withField(s: RunConfig, path: string, value: unknown): RunConfig {
  const out = structuredClone(s) as unknown as Record<string, unknown>;
  const keys = path.split('.');
  let at = out;
  for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>;
  at[keys[keys.length - 1] as string] = value;
  return out as unknown as RunConfig;
}

describe('every field of the settings is checked', () => {
  const base = defaultRunConfig();
  const refuse = (path: string, value: unknown, message: RegExp) =>
    expect(() => validateRunConfig(withField(base, path, value)), `${path} = ${String(value)}`).toThrow(
      message,
    );

  it('refuses a wrongly typed, non-finite or out-of-range number, naming the field and the value', () => {
    // Each [path, bad value, message]; every one was accepted before.
    const cases: [string, unknown, RegExp][] = [
      ['code.learningRate', 'abc', /learningRate must be a positive number up to 1, got "abc"/],
      ['code.learningRate', -5, /learningRate must be a positive number up to 1, got -5/],
      ['code.learningRate', 1e9, /learningRate .* got 1000000000/],
      ['code.learningRate', 0, /learningRate .* got 0/],
      ['code.learningRate', NaN, /learningRate .* got NaN/],
      ['code.updatesPerBatch', 0, /updatesPerBatch must be an integer from 1 to 32, got 0/],
      ['code.updatesPerBatch', 1e9, /updatesPerBatch .* got 1000000000/],
      ['code.updatesPerBatch', 1.5, /updatesPerBatch .* got 1.5/],
      // An empty number field binds null: said as nothing, not as JSON.
      ['code.updatesPerBatch', null, /updatesPerBatch must be an integer from 1 to 32, got nothing$/],
      ['code.learningRate', null, /learningRate must be a positive number up to 1, got nothing$/],
      ['code.gamma', 'x', /gamma \(the GAE discount\) must be a number from 0 to 1, got "x"/],
      ['code.gamma', 7, /gamma .* got 7/],
      ['code.lambda', -3, /lambda \(the GAE λ\) must be a number from 0 to 1, got -3/],
      ['code.contextLength', 0, /contextLength \(the batch length\) must be an integer from 1 to 64, got 0/],
      ['code.contextLength', 65, /contextLength \(the batch length\) .* got 65/],
      ['code.reviewFraction', 5, /reviewFraction must be a number from 0 to 1, got 5/],
      ['code.reviewFraction', '0.5', /reviewFraction .* got "0.5"/],
      ['code.temperature', 0, /temperature must be a positive number up to 10, got 0/],
      ['code.temperature', Infinity, /temperature .* got Infinity/],
      ['code.candidates', 0, /candidates must be an integer from 1 to 100, got 0/],
      ['code.valueWindow', 0.5, /valueWindow must be 0 or a number ≥ 1, got 0.5/],
      ['code.valueWindow', '100', /valueWindow .* got "100"/],
      ['code.lrHalfLife', '600', /half-life .* got "600"/],
      ['code.tasksPerBatch', 1e9, /tasksPerBatch must be an integer from 1 to 64, got 1000000000/],
      ['code.groupSize', 33, /groupSize must be an integer from 1 to 32, got 33/],
      ['code.seed', -1, /the code config seed must be an integer from 0 to 2147483647, got -1/],
      ['code.curriculum.enabled', 'yes', /curriculum enabled must be true or false, got "yes"/],
      ['code.curriculum.window', 0, /curriculum window must be an integer from 1 to 1000, got 0/],
      ['code.curriculum.promoteAt', 0, /curriculum promoteAt must be a positive number up to 1, got 0/],
      ['code.curriculum.promoteAt', '0.7', /curriculum promoteAt .* got "0.7"/],
      ['code.hindsight.samplesPerBatch', 1e6, /hindsight samplesPerBatch must be an integer from 0 to 256/],
      ['code.hindsight.capacity', -1, /hindsight capacity must be an integer from 0 to 100000, got -1/],
      [
        'code.hindsight.taskFraction',
        '0.5',
        /hindsight taskFraction must be a number from 0 to 1, got "0.5"/,
      ],
      ['code.hindsight.uniformFraction', 2, /hindsight uniformFraction .* got 2/],
      ['code.hindsight.advantage', 0, /hindsight advantage must be a positive number up to 100, got 0/],
      ['code.hindsight.mutations', 1.5, /hindsight mutations must be an integer from 0 to 64, got 1.5/],
      ['code.hindsight.mutations', 65, /hindsight mutations .* got 65/],
      ['code.hindsight.maxAbsOutput', 1e7, /hindsight maxAbsOutput must be a positive number up to 1000000/],
      ['replay.betaDraws', 'y', /replay betaDraws must be an integer from 0 to 1000000, got "y"/],
      ['replay.betaDraws', -1, /replay betaDraws .* got -1/],
      ['replay.epsilon', -1, /replay epsilon must be a positive number up to 1, got -1/],
      ['replay.epsilon', 0, /replay epsilon .* got 0/],
      ['replay.alpha', -0.5, /replay alpha must be a number from 0 to 1, got -0.5/],
      ['replay.beta0', 2, /replay beta0 must be a number from 0 to 1, got 2/],
      ['replay.capacity', 0, /replay capacity must be an integer from 1 to 100000, got 0/],
      ['eta', '', /η must be 0 or more \(or unbounded\), got ""/],
      ['eta', true, /η must be 0 or more \(or unbounded\), got true/],
      ['eta', -1, /η .* got -1/],
      ['eta', 1.5, /η must be an integer, got 1.5/],
      ['seed', 2 ** 31, /the seed must be an integer from 0 to 2147483647, got 2147483648/],
      ['seed', 1e300, /the seed must be an integer from 0 to 2147483647/],
      ['seed', -1, /the seed .* got -1/],
      ['seed', '1', /the seed .* got "1"/],
      ['workers', '2', /rollout workers must be an integer from 1 to 8, got "2"/],
      ['slotsPerWorker', 0, /slotsPerWorker must be an integer from 1 to 32, got 0/],
      ['interruptEveryTokens', 1e9, /interruptEveryTokens must be an integer from 0 to 64, got 1000000000/],
      ['preemptAfterMs', 1e12, /preemptAfterMs must be an integer from 0 to 3600000/],
      ['keepConsumed', 1e9, /keepConsumed must be an integer from 0 to 100000/],
      ['keepVersions', 0, /keepVersions must be an integer from 1 to 1000, got 0/],
      ['milestoneEvery', 2.5, /milestoneEvery .* got 2.5/],
      ['lora', { rank: 4, alpha: 1e9 }, /LoRA alpha must be a positive number up to 256, got 1000000000/],
      ['lora', { rank: '4', alpha: 8 }, /LoRA rank must be an integer from 1 to 16, got "4"/],
      ['lora', false, /LoRA must be an object of settings, got false/],
      ['startFrom', { runId: 'r', version: '3' }, /version must be a non-negative integer, got "3"/],
      [
        'startFrom',
        { base: 'easy-half', runId: 'r' },
        /name \{ base \} or \{ runId, version \}, got the keys base, runId/,
      ],
      ['startFrom', { runId: 'r' }, /got the keys runId$/],
      ['startFrom', {}, /got the keys \(none\)/],
      ['code', 5, /the code config must be an object of settings, got 5/],
      ['replay', null, /the replay config must be an object of settings, got null/],
    ];
    for (const [path, value, message] of cases) refuse(path, value, message);
  });

  it('refuses an environment a run cannot play, through the env config checks', () => {
    const cases: [string, unknown, RegExp][] = [
      ['code.env.maxTurns', -5, /env maxTurns must be a positive integer, got -5/],
      ['code.env.maxTurns', 33, /env maxTurns must be an integer from 1 to 32 .* got 33/],
      ['code.env.maxTokensPerTurn', 0, /env maxTokensPerTurn must be a positive integer, got 0/],
      ['code.env.maxTokensPerTurn', 65, /env maxTokensPerTurn must be at most the env contextLength \(64\)/],
      ['code.env.contextLength', 0, /env contextLength must be a positive integer, got 0/],
      [
        'code.env.contextLength',
        1e9,
        /env contextLength must be at most contextLength, the batch length \(64\).* got 1000000000/,
      ],
      ['code.env.allowRunOnLastTurn', 1, /env allowRunOnLastTurn must be true or false, got 1/],
      ['code.env.reward.pass', 'x', /reward weight pass must be a number from 0 to 100, got "x"/],
      ['code.env.reward.turnCost', -100, /reward weight turnCost .* got -100/],
      ['code.env.reward.noSubmit', 1e9, /reward weight noSubmit .* got 1000000000/],
      ['code.env.reward', 5, /env reward must be an object of weights, got 5/],
      [
        'code.env.limits.deadlineMs',
        'x',
        /sandbox limit deadlineMs must be a number of ms above 0, at most 10000, got "x"/,
      ],
      ['code.env.limits.deadlineMs', 0, /sandbox limit deadlineMs .* got 0/],
      [
        'code.env.limits.memoryBytes',
        -1,
        /sandbox limit memoryBytes must be an integer from 1 to 1073741824, got -1/,
      ],
      ['code.env', null, /the env config must be an object, got null/],
    ];
    for (const [path, value, message] of cases) refuse(path, value, message);
    // A batch shorter than the env's context could not hold an episode.
    const short = withField(withField(base, 'code.contextLength', 32), 'code.env.contextLength', 48);
    expect(() => validateRunConfig(short)).toThrow(
      /env contextLength must be at most contextLength, the batch length \(32\)/,
    );
    // Shorter contexts that fit one another are fine.
    const fits = withField(withField(base, 'code.contextLength', 48), 'code.env.contextLength', 40);
    expect(() => validateRunConfig(fits)).not.toThrow();
  });

  it('accepts the defaults, every preset and every value the page offers', () => {
    for (let cores = 1; cores <= 32; cores++)
      expect(() => validateRunConfig(defaultRunConfig(cores))).not.toThrow();
    for (const p of PRESETS)
      expect(() => validateRunConfig(applyPreset(defaultRunConfig(), p)), p.id).not.toThrow();
    // The run panel's controls (RunPanel.svelte), one at a time.
    const offered: [string, unknown[]][] = [
      ['eta', [0, 1, 2, 4, 8, Infinity]],
      ['workers', [1, 2, 3, 4, 5, 6, 7, 8]],
      ['loss', ['decoupled', 'ppo']],
      ['code.estimator', ['rloo', 'grpo', 'gae']],
      ['code.hindsight.samplesPerBatch', [0, 8, 16, 32]],
      ['code.hindsight.taskFraction', [0, 0.25, 0.5]],
      ['code.hindsight.mutations', [0, 1, 2, 4]],
      ['code.lrHalfLife', [0, 300, 600, 1200]],
      ['lora', [null, ...[2, 4, 8, MAX_LORA_RANK].map((rank) => ({ rank, alpha: 2 * rank }))]],
      ['replay.mode', ['fifo', 'prioritized']],
      ['interruptEveryTokens', [0, 1]],
      ['code.curriculum.enabled', [true, false]],
      ['level', [null, 'easy', 'medium', 'hard']],
      ['seed', [0, 1, 7, MAX_SEED]],
    ];
    for (const [path, values] of offered)
      for (const v of values)
        expect(() => validateRunConfig(withField(base, path, v)), `${path} = ${String(v)}`).not.toThrow();
    // A round trip through stored JSON (η = Infinity as null) still validates.
    const back = runConfigFromJson(runConfigToJson({ ...base, eta: Infinity }));
    expect(() => validateRunConfig(back)).not.toThrow();
    expect(back.eta).toBe(Infinity);
  });

  it('keeps a stored η as it is, so that a string or a boolean is refused, not read as a number', () => {
    expect(runConfigFromJson({ eta: '' }).eta).toBe('');
    expect(() => validateRunConfig(runConfigFromJson({ eta: '' }))).toThrow(/η must be 0 or more/);
    expect(() => validateRunConfig(runConfigFromJson({ eta: true }))).toThrow(/got true/);
    expect(runConfigFromJson({ eta: null }).eta).toBe(Infinity);
    expect(runConfigFromJson({ eta: 2 }).eta).toBe(2);
  });
});

describe('the task kind', () => {
  it('is examples by default and for a run stored before it existed; tool use brings its env', () => {
    expect(defaultRunConfig().taskKind).toBe('examples');
    const stored = runConfigToJson(defaultRunConfig());
    delete stored.taskKind;
    expect(runConfigFromJson(stored).taskKind).toBe('examples');
    const tool = withTaskKind(defaultRunConfig(), 'tooluse');
    expect(tool.env).toEqual(TOOLUSE_ENV_CONFIG);
    expect(() => validateRunConfig(tool)).not.toThrow();
    const back = runConfigFromJson(
      JSON.parse(JSON.stringify(runConfigToJson(tool))) as Record<string, unknown>,
    );
    expect(back).toEqual(tool);
    expect(withTaskKind(tool, 'examples').env).toEqual(DEFAULT_ENV_CONFIG);
  });

  it('refuses a kind it has no tasks of', () => {
    const bad = runConfigFromJson({ ...runConfigToJson(defaultRunConfig()), taskKind: 'quiz' });
    expect(() => validateRunConfig(bad)).toThrow(
      'the task kind must be one of "examples", "tooluse", got "quiz"',
    );
  });
});

describe('the fixed lag', () => {
  it('is off by default and for a run stored before it existed', () => {
    expect(defaultRunConfig().playLag).toBe(0);
    const stored = runConfigToJson(defaultRunConfig());
    delete stored.playLag;
    expect(runConfigFromJson(stored).playLag).toBe(0);
  });

  it('runs synchronously on full versions, and refuses a lag it cannot hold, saying why', () => {
    const sync = { ...defaultRunConfig(), eta: 0 };
    expect(() => validateRunConfig({ ...sync, playLag: 16 })).not.toThrow();
    expect(() => validateRunConfig({ ...sync, playLag: 65 })).toThrow(
      'the fixed lag must be an integer from 0 to 64, got 65',
    );
    expect(() => validateRunConfig({ ...sync, playLag: 1.5 })).toThrow(/fixed lag .* got 1.5/);
    expect(() => validateRunConfig({ ...sync, eta: 4, playLag: 8 })).toThrow(
      'a fixed lag holds the staleness itself: η must be 0 with it, got 4',
    );
    expect(() => validateRunConfig({ ...sync, playLag: 8, lora: { rank: 4, alpha: 8 } })).toThrow(
      'a fixed lag plays older full versions: turn LoRA off to use it',
    );
  });
});
