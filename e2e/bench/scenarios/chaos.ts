import type { Scenario } from '../harness.ts';
import { account } from '../../../src/lib/pipeline/ledger.ts';
import { openLab } from './pipeline.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const scenario: Scenario = {
  name: 'chaos',
  description:
    'an asynchronous run (η = 4, 3 rollout workers; --preempt 1: scheduled by expected reward, with preemption) for --minutes N (10) in which a rollout worker is crashed or hung every 10 s (by turns) and the trainer killed every 60 s: faults injected and recovered, trajectories written, stored, trained, and lost or orphaned counted by seq (goal: 0), versions published in each minute (goal: some in every one)',
  async run({ baseUrl, launch, options, log }) {
    const minutes = Number(options.minutes?.[0] ?? 10);
    const workers = Number(options.workers?.[0] ?? 3);
    const rolloutEvery = Number(options.rolloutEvery?.[0] ?? 10) * 1000;
    const trainerEvery = Number(options.trainerEvery?.[0] ?? 60) * 1000;
    // --preempt 1: jobs drawn ahead and preempted by expected reward, victims resumed from their prefix.
    const preempt = (options.preempt?.[0] ?? '0') !== '0';
    const scheduling = preempt
      ? { schedule: 'expected-reward' as const, queueAhead: 2, preemptMargin: 0.3, preemptAfterMs: 200 }
      : {};
    const { lab, close } = await openLab(launch, baseUrl, options.backend?.[0]);
    const read = () =>
      lab.evaluate((l) => ({
        version: l.run.dashboard?.version ?? -1,
        error: l.run.error,
        faults: (l.run.dashboard?.faults ?? []).map((f) => ({
          lane: f.lane,
          replaced: f.replacedAt !== null,
        })),
        restarts: l.run.dashboard?.counters.trainerRestarts ?? 0,
        runId: l.run.runId,
      }));
    try {
      await lab.evaluate(
        (l, [w, s]) => void l.run.start({ config: { pipeline: { eta: 4, workers: w, ...s } }, evalEvery: 0 }),
        [workers, scheduling] as const,
      );
      for (let deadline = Date.now() + 180_000; (await read()).version < 1;) {
        if (Date.now() > deadline) throw new Error('the run published no version in 180 s');
        await sleep(250);
      }
      const startedAt = Date.now();
      const end = startedAt + minutes * 60_000;
      let rolloutFaults = 0;
      let trainerKills = 0;
      let nextRollout = startedAt + rolloutEvery;
      let nextTrainer = startedAt + trainerEvery;
      let nextMinute = startedAt + 60_000;
      let lastVersion = (await read()).version;
      const perMinute: number[] = [];
      while (Date.now() < end) {
        await sleep(Math.max(0, Math.min(nextRollout, nextTrainer, nextMinute, end) - Date.now()));
        const now = Date.now();
        const state = await read();
        if (state.error) throw new Error(`the run failed: ${state.error}`);
        if (now >= nextMinute) {
          perMinute.push(state.version - lastVersion);
          log(`minute ${perMinute.length}: ${state.version - lastVersion} versions (now ${state.version})`);
          lastVersion = state.version;
          nextMinute += 60_000;
        }
        if (now >= nextTrainer) {
          await lab.evaluate((l) => l.run.session?.faultTrainer());
          trainerKills += 1;
          nextTrainer += trainerEvery;
          log(`trainer killed (${trainerKills})`);
        }
        if (now >= nextRollout) {
          const kind = rolloutFaults % 2 === 0 ? 'crash' : 'hang';
          // The next worker in turn that is live (one faulted just before may still be starting).
          let done = false;
          for (let k = 0; k < workers && !done; k++) {
            const index = (rolloutFaults + k) % workers;
            done = await lab.evaluate(
              (l, [n, f]) => {
                try {
                  l.run.session?.fault(n, f);
                  return l.run.session !== null;
                } catch {
                  return false;
                }
              },
              [index, kind] as const,
            );
          }
          if (done) rolloutFaults += 1;
          nextRollout += rolloutEvery;
        }
      }
      // Every fault has had its time to be handled: replaced workers, a restarted trainer.
      let state = await read();
      for (let deadline = Date.now() + 90_000; Date.now() < deadline; state = await read()) {
        const replaced = state.faults.filter((f) => f.replaced).length;
        if (replaced >= rolloutFaults && state.restarts >= trainerKills && !state.error) break;
        await sleep(500);
      }
      const before = state.version;
      for (let deadline = Date.now() + 60_000; state.version <= before && Date.now() < deadline;) {
        await sleep(500);
        state = await read();
      }
      await lab.evaluate((l) => l.run.stop());
      const runId = state.runId;
      const counters = await lab.evaluate((l) => l.run.dashboard?.counters ?? null);
      if (!counters || !runId) throw new Error('the run left no counters');
      const stored = await lab.evaluate((l, id) => l.run.storedSeqs(id, 'all'), runId);
      const unconsumed = await lab.evaluate((l, id) => l.run.storedSeqs(id, 'unconsumed'), runId);
      const ledger = await lab.evaluate((l) => l.run.ledger());
      if (!ledger) throw new Error('the run left no ledger');
      // Every episode written is trained, dropped as too stale (or out of a full buffer), or waits
      // unconsumed for a resume, each by its seq. A relaunched job stores its group over the seqs a
      // faulted worker may have written before it could answer, so a stored episode the session
      // never wrote (an orphan) is a fault in the accounting; so is one written and found nowhere.
      const { lost, orphans } = account(ledger, stored, unconsumed);
      const result = {
        'chaos.minutes': minutes,
        'chaos.rolloutFaults': rolloutFaults,
        'chaos.rolloutRecorded': state.faults.length,
        'chaos.rolloutRecovered': state.faults.filter((f) => f.replaced).length,
        'chaos.rolloutUnrecovered': state.faults.filter((f) => !f.replaced).length,
        'chaos.trainerKills': trainerKills,
        'chaos.trainerRecovered': state.restarts,
        'chaos.written': counters.generatedEpisodes,
        'chaos.stored': stored.length,
        'chaos.unconsumed': unconsumed.length,
        'chaos.trained': counters.trainedEpisodes,
        'chaos.staleDropped': counters.staleDroppedEpisodes,
        'chaos.requeues': counters.requeues,
        'chaos.preemptions': counters.preemptions,
        'chaos.resumed': counters.resumed,
        'chaos.lost': lost.length,
        'chaos.orphans': orphans.length,
        'chaos.lostSeqs': lost.slice(0, 20),
        'chaos.orphanSeqs': orphans.slice(0, 20),
        'chaos.versions': state.version,
        'chaos.versionsPerMinute': perMinute,
        'chaos.minutesWithoutVersion': perMinute.filter((n) => n <= 0).length,
      };
      log(JSON.stringify(result));
      return result;
    } finally {
      await close();
    }
  },
};

export default scenario;
