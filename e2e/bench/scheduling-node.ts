/**
 * The rollout schedules side by side, in node: `learn-node.ts` once per schedule
 * (`pipeline.schedule`) and seed, each for the same training seconds, the rest of the run config as
 * the learn bench's. Every schedule gets the same queue and budgets (`QUEUE`: two jobs drawn ahead,
 * a preemption margin of 0.3 after 100 ms, 1 sandbox ms per episode a slot), so that only the
 * order differs (only `expected-reward` preempts by reward). Per schedule, mean ± sd over seeds:
 * seconds to the easy training goal (greedy training success ≥ 0.9) and to the whole goal (also
 * held-out ≥ 0.7), episodes per second, preemptions (and jobs resumed from their prefix),
 * requeues, mean queue wait, jobs held for a budget, overruns, final greedy training and
 * held-out success.
 *
 *   npx tsx e2e/bench/scheduling-node.ts [--seconds 300] [--seeds 1,2,3]
 *     [--schedules learning-value,fifo,expected-reward] [--eta 4] [--set group.field=value]...
 *
 * Prints one JSON object last (the `scheduling` bench scenario reads it).
 */
import { RUN_CONFIG_CHOICES } from '../../src/lib/config/run-config.ts';
import { meanSd } from '../../src/lib/run/tooluse-bench.ts';
import { flag, runLearnNode } from './node-kit.ts';

const SECONDS = Number(flag('seconds', '300'));
const SEEDS = flag('seeds', '1,2,3').split(',').map(Number);
const ETA = flag('eta', '4');
/** The queue and budgets every schedule runs with (a `--set` of the same field comes after: it wins). */
const QUEUE = [
  'pipeline.queueAhead=2',
  'pipeline.preemptMargin=0.3',
  'pipeline.preemptAfterMs=100',
  'pipeline.budgetSandboxMs=1',
];
const SCHEDULES = flag('schedules', 'learning-value,fifo,expected-reward').split(',');
const known = RUN_CONFIG_CHOICES['pipeline.schedule'] ?? [];
for (const s of SCHEDULES)
  if (!known.includes(s)) throw new Error(`--schedules takes ${known.join(', ')}, not ${s}`);
if (!(SECONDS > 0) || SEEDS.some((s) => !Number.isInteger(s)))
  throw new Error('--seconds takes a positive number, --seeds a comma list of integers');
const sets = process.argv.flatMap((a, i) => (a === '--set' ? ['--set', process.argv[i + 1] ?? ''] : []));

/** The last JSON line learn-node prints, as far as this script reads it. */
interface LearnResult {
  seconds: number;
  versions: number;
  episodes: number;
  episodesPerSec: number;
  preemptions: number;
  resumed: number;
  requeues: number;
  meanWaitMs: number;
  budgetWaits: number;
  overruns: number;
  startedGroups: number;
  finalTrain: number;
  finalHeldOut: number;
  train90: { seconds: number } | null;
  goal: { seconds: number } | null;
}

const rows = SEEDS.flatMap((seed) =>
  SCHEDULES.map((schedule) => {
    const r = runLearnNode<LearnResult>(
      [
        '--seed',
        String(seed),
        '--seconds',
        String(SECONDS),
        '--eta',
        ETA,
        '--set',
        `pipeline.schedule=${schedule}`,
        ...QUEUE.flatMap((s) => ['--set', s]),
        ...sets,
      ],
      `${schedule} seed ${seed}`,
    );
    const row = {
      schedule,
      seed,
      seconds: r.seconds,
      versions: r.versions,
      episodes: r.episodes,
      episodesPerSec: r.episodesPerSec,
      preemptions: r.preemptions,
      resumed: r.resumed,
      requeues: r.requeues,
      meanWaitMs: r.meanWaitMs,
      budgetWaits: r.budgetWaits,
      overruns: r.overruns,
      groups: r.startedGroups,
      secondsToTrain90: r.train90?.seconds ?? null,
      secondsToGoal: r.goal?.seconds ?? null,
      successTrain: r.finalTrain,
      successHeldOut: r.finalHeldOut,
    };
    console.log(JSON.stringify(row));
    return row;
  }),
);

type Row = (typeof rows)[number];
const figure = (schedule: string, key: keyof Row) =>
  meanSd(rows.filter((r) => r.schedule === schedule).map((r) => r[key] as number | null));
const perSchedule = Object.fromEntries(
  SCHEDULES.map((schedule) => [
    schedule,
    {
      secondsToTrain90: figure(schedule, 'secondsToTrain90'),
      reachedTrain90: rows.filter((r) => r.schedule === schedule && r.secondsToTrain90 !== null).length,
      secondsToGoal: figure(schedule, 'secondsToGoal'),
      episodesPerSec: figure(schedule, 'episodesPerSec'),
      preemptions: figure(schedule, 'preemptions'),
      resumed: figure(schedule, 'resumed'),
      requeues: figure(schedule, 'requeues'),
      meanWaitMs: figure(schedule, 'meanWaitMs'),
      budgetWaits: figure(schedule, 'budgetWaits'),
      overruns: figure(schedule, 'overruns'),
      successTrain: figure(schedule, 'successTrain'),
      successHeldOut: figure(schedule, 'successHeldOut'),
    },
  ]),
);
console.log(JSON.stringify({ seconds: SECONDS, seeds: SEEDS, eta: ETA, rows, perSchedule }));
