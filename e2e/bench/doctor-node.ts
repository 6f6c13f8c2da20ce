/**
 * The training doctor calibrated on real runs, in node: the learn bench's training (as
 * `learn-node.ts` runs it: the real pipeline, job source, rollout engine and trainer; wasm, η 0,
 * one worker, easy level, no greedy evaluations) with the page's doctor (`TrainingDoctor`)
 * diagnosing the series at every step, as the page does. Arms:
 *
 *   healthy      the defaults: any finding is a false one (every arm runs once per `--seeds`)
 *   lr-high      learner.learningRate 30× the default: expects falling, grad-spikes, loss-volatile,
 *                value-diverging, steps-too-large or non-finite
 *   no-entropy   learner.entropyCoef 0, policy.temperature 0.3: expects entropy-collapse,
 *                echo-trap, one-family or stagnant
 *   saturated    trained on the easy level's constant tasks only (a level too easy): expects saturated
 *
 *   npx tsx e2e/bench/doctor-node.ts [--arms healthy,lr-high,no-entropy,saturated] [--seeds 1,2,3]
 *     [--seconds 170] [--maxVersions 300] [--out bench-results/doctor] [--set group.field=value]...
 *   npx tsx e2e/bench/doctor-node.ts --replay bench-results/doctor [--set doctor.field=value]...
 *
 * Each run is a child process (`--arm NAME --seed N`) that writes its series to `--out` (steps,
 * programs in the order they were read, refused steps); `--replay` diagnoses those records again
 * with the doctor's current defaults and the `--set doctor.…` given, to tune thresholds without
 * training. The last line of stdout is one JSON object: per run the findings fired (id, version
 * fired, version withdrawn), and the false findings of the healthy runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultRunConfig, type RunConfig } from '../../src/lib/config/run-config.ts';
import type { DetectorId, ProgramWritten } from '../../src/lib/stats/doctor.ts';
import { TrainingDoctor } from '../../src/lib/stats/training-doctor.ts';
import type { StepReport } from '../../src/lib/pipeline/types.ts';
import type { CurriculumView } from '../../src/lib/env/curriculum.ts';
import { flag, withSets } from './node-kit.ts';

/** A provoked arm: what it changes, and the findings any one of which shows the doctor saw it. */
export interface Arm {
  name: string;
  /** `--set` lines laid on the defaults. */
  sets: string[];
  /** Train on the easy level's constant tasks only. */
  constantsOnly?: boolean;
  /** Findings that show the fault; empty: a healthy run, where any finding is false. */
  expects: DetectorId[];
}

export const ARMS: readonly Arm[] = [
  { name: 'healthy', sets: [], expects: [] },
  {
    name: 'lr-high',
    sets: ['learner.learningRate=0.09'],
    expects: ['non-finite', 'falling', 'grad-spikes', 'loss-volatile', 'steps-too-large', 'value-diverging'],
  },
  {
    name: 'no-entropy',
    sets: ['learner.entropyCoef=0', 'policy.temperature=0.3'],
    expects: ['entropy-collapse', 'echo-trap', 'one-family', 'stagnant'],
  },
  { name: 'saturated', sets: [], constantsOnly: true, expects: ['saturated'] },
];

/** What one run left: its series as the doctor read them, in order. */
export interface RunRecord {
  arm: string;
  seed: number;
  settings: RunConfig;
  /** Each step, with the programs read before it was diagnosed and the curriculum then. */
  steps: { report: StepReport; programs: ProgramWritten[]; curriculum: CurriculumView }[];
  refused: number[];
  seconds: number;
}

/** One spell of a finding over a run. */
interface Fired {
  id: DetectorId;
  firedAt: number;
  withdrawnAt: number | null;
}

/** What the doctor found over a recorded run, replayed step by step as the page diagnoses. */
export function replay(record: RunRecord, settings: RunConfig = record.settings): Fired[] {
  const doctor = new TrainingDoctor(settings);
  const steps: StepReport[] = [];
  const refused = [...record.refused];
  for (const s of record.steps) {
    doctor.wrote(s.programs);
    steps.push(s.report);
    while (refused.length && (refused[0] as number) <= s.report.version)
      doctor.failed('step not applied', refused.shift() as number);
    doctor.check(steps, [], s.curriculum);
  }
  for (const v of refused) doctor.failed('step not applied', v);
  if (refused.length) doctor.check(steps, [], record.steps.at(-1)?.curriculum ?? null);
  return doctor.history.map(({ id, firedAt, withdrawnAt }) => ({ id, firedAt, withdrawnAt }));
}

/** A run's line of the summary: what fired, and whether it is what the arm expects. */
function judged(record: RunRecord, fired: Fired[]) {
  const arm = ARMS.find((a) => a.name === record.arm) as Arm;
  const ids = [...new Set(fired.map((f) => f.id))];
  const last = record.steps.at(-1)?.report;
  const tail = record.steps.slice(-50).map((s) => s.report.success);
  return {
    arm: record.arm,
    seed: record.seed,
    versions: last?.version ?? 0,
    seconds: Math.round(record.seconds),
    successLast50: tail.length ? Number((tail.reduce((a, x) => a + x, 0) / tail.length).toFixed(3)) : null,
    fired,
    ...(arm.expects.length
      ? {
          expectedFired: ids.filter((id) => arm.expects.includes(id)),
          ok: ids.some((id) => arm.expects.includes(id)),
        }
      : { falseFindings: ids, ok: ids.length === 0 }),
  };
}

const here = path.dirname(fileURLToPath(import.meta.url));
const OUT = flag('out', 'bench-results/doctor');
const ARM = flag('arm', '');
const REPLAY = flag('replay', '');

if (ARM) await trainOne(ARM, Number(flag('seed', '1')));
else if (REPLAY) {
  const records = readdirSync(REPLAY)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(path.join(REPLAY, f), 'utf8')) as RunRecord);
  // The doctor's defaults now, with the command line's `--set doctor.…` laid over each run's settings.
  const runs = records.map((r) =>
    judged(r, replay(r, withSets({ ...r.settings, doctor: defaultRunConfig(2).doctor }))),
  );
  console.log(JSON.stringify({ replayed: REPLAY, runs, ok: runs.every((r) => r.ok) }));
} else {
  const arms = flag('arms', ARMS.map((a) => a.name).join(',')).split(',');
  const seeds = flag('seeds', '1,2,3').split(',');
  const passed = process.argv.slice(2).filter((a, i, all) => a === '--set' || all[i - 1] === '--set');
  mkdirSync(OUT, { recursive: true });
  const runs = [];
  for (const arm of arms)
    for (const seed of seeds) {
      const child = spawnSync(
        'npx',
        [
          'tsx',
          path.join(here, 'doctor-node.ts'),
          '--arm',
          arm,
          '--seed',
          seed,
          '--out',
          OUT,
          ...passed,
          '--seconds',
          flag('seconds', '170'),
          '--maxVersions',
          flag('maxVersions', '300'),
        ],
        { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 },
      );
      const line = child.stdout.trim().split('\n').at(-1) ?? '';
      console.log(`# ${arm} seed ${seed}: ${line}`);
      runs.push(JSON.parse(line) as ReturnType<typeof judged>);
    }
  console.log(JSON.stringify({ out: OUT, runs, ok: runs.every((r) => r.ok) }));
}

/** Trains one arm's run, diagnosing at every step; writes its record and prints its line. */
async function trainOne(name: string, seed: number): Promise<void> {
  const arm = ARMS.find((a) => a.name === name);
  if (!arm) throw new Error(`--arm takes ${ARMS.map((a) => a.name).join(', ')}, not ${name}`);
  // Imported here: the parent and `--replay` need no tfjs.
  const { trainRecorded } = await import('./doctor-train.ts');
  const record = await trainRecorded(arm, seed, {
    seconds: Number(flag('seconds', '170')),
    maxVersions: Number(flag('maxVersions', '300')),
  });
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, `${name}-seed${seed}.json`), JSON.stringify(record));
  const fired = replay(record);
  console.log(JSON.stringify(judged(record, fired)));
  process.exit(0);
}
