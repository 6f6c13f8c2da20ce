import { describe, expect, it } from 'vitest';
import { defaultRunConfig } from '../config/run-config';
import type { CurriculumView } from '../env/curriculum';
import { BOS, RUN, SEP, SUBMIT, tokenId } from '../env/vocab';
import type { StepReport } from '../pipeline/types';
import { STEP_NOT_APPLIED, type StepMetrics } from '../policy/metrics';
import { isRefusedStep, lastProgram, TrainingDoctor } from './training-doctor';

/** A trajectory's tokens from a prompt and the policy's turns: `[program, control, version]` each. */
function episode(turns: [string, number | null, number][]) {
  const tokens: number[] = [BOS, tokenId('f('), tokenId('1'), tokenId(')='), tokenId('3'), SEP];
  const owned: number[] = tokens.map(() => 0);
  const versions: number[] = tokens.map(() => -1);
  const push = (id: number, own: number, version: number) => {
    tokens.push(id);
    owned.push(own);
    versions.push(version);
  };
  for (const [program, control, version] of turns) {
    for (const ch of program) push(tokenId(ch), 1, version);
    if (control !== null) push(control, 1, version);
    if (control === RUN) for (const t of ['got', '3']) push(tokenId(t), 0, -1);
    if (control === RUN) push(SEP, 0, -1);
  }
  return { tokens, owned, versions };
}

/** A steady run's step reports: versions 1 … n, success `success(v)`. */
function steps(n: number, success: (v: number) => number): StepReport[] {
  const metrics = {
    entropy: 1,
    gradNorm: 1,
    pgLoss: 0,
    valueLoss: 0.05,
    approxKl: 0,
    clipFrac: 0,
    maskedFrac: 0,
    loss: 0,
  };
  return Array.from({ length: n }, (_, i) => ({
    version: i + 1,
    episodes: 16,
    meanReturn: success(i + 1),
    success: success(i + 1),
    returnSpread: 0.3,
    staleness: [1],
    loss: 0,
    metrics: metrics as StepMetrics,
    waitMs: 0,
    trainMs: 0,
    at: 0,
  }));
}

const curriculum = (promotions: number): CurriculumView => ({
  enabled: true,
  level: promotions ? 'medium' : 'easy',
  rate: 0.5,
  seen: 10,
  tasks: 26,
  tried: 10,
  window: 20,
  promoteAt: 0.7,
  promotions: Array.from({ length: promotions }, () => ({
    from: 'easy' as const,
    to: 'medium' as const,
    episode: 100,
  })),
  next: 'hard',
});

describe('the program an episode ended on', () => {
  it('is its last turn’s, with the newest version that wrote it', () => {
    expect(
      lastProgram(
        episode([
          ['x+2', RUN, 4],
          ['2*x+1', SUBMIT, 5],
        ]),
      ),
    ).toEqual({ version: 5, program: '2*x+1' });
    expect(lastProgram(episode([['3', SUBMIT, 7]]))).toEqual({ version: 7, program: '3' });
  });

  it('is what it had written when cut short, or the last turn’s when it stopped between turns', () => {
    expect(
      lastProgram(
        episode([
          ['x+2', RUN, 1],
          ['x*', null, 2],
        ]),
      ),
    ).toEqual({ version: 2, program: 'x*' });
    expect(lastProgram(episode([['x+2', RUN, 1]]))).toEqual({ version: 1, program: 'x+2' });
  });
});

describe('the doctor over a live run', () => {
  it('reads the programs of the groups played, and not those of aborted ones', () => {
    const base = defaultRunConfig();
    // Past the plateau grace from the start: 60 versions are enough to judge.
    const doctor = new TrainingDoctor({ ...base, doctor: { ...base.doctor, plateauGrace: 0 } });
    const constant = {
      status: 'done' as const,
      trajectories: Array.from({ length: 4 }, () => episode([['3', SUBMIT, 60]])),
    };
    doctor.played({ ...constant, status: 'aborted' });
    const run = steps(60, () => 0.3);
    expect(doctor.check(run).fired).toEqual([]);
    for (let i = 0; i < 12; i++) doctor.played(constant);
    expect(doctor.check(run).fired).toEqual(['one-family']);
    expect(doctor.current[0]?.meaning).toMatch(/one program, 3,/);
  });

  it('marks a step refused for a non-finite loss, and not any other failure', () => {
    const doctor = new TrainingDoctor(defaultRunConfig());
    expect(doctor.failed('the trainer crashed', 10)).toBe(false);
    expect(doctor.failed(`training step 11: the loss is NaN: ${STEP_NOT_APPLIED}`, 10)).toBe(true);
    expect(isRefusedStep('the trainer crashed')).toBe(false);
    expect(doctor.check(steps(10, () => 0.3)).fired).toEqual(['non-finite']);
    expect(doctor.history).toEqual([
      expect.objectContaining({ id: 'non-finite', firedAt: 10, withdrawnAt: null }),
    ]);
  });

  it('counts a promotion from the step it is first seen at, but not one a resumed run had made before', () => {
    // Success drops at 300 as the level moves on: a promotion, not a fall.
    const run = steps(400, (v) => (v < 300 ? 0.8 : 0.2));
    const ids = (d: TrainingDoctor) => d.current.map((f) => f.id);
    const promoted = new TrainingDoctor(defaultRunConfig());
    promoted.check(run.slice(0, 299), [], curriculum(0));
    promoted.check(run.slice(0, 300), [], curriculum(1));
    promoted.check(run, [], curriculum(1));
    expect(ids(promoted)).not.toContain('falling');
    // A resumed run that had promoted long before reads its first view as history.
    const resumed = new TrainingDoctor(defaultRunConfig());
    resumed.check(run.slice(0, 300), [], curriculum(1));
    resumed.check(run, [], curriculum(1));
    expect(ids(resumed)).toContain('falling');
  });
});
