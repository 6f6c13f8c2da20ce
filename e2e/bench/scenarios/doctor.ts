import { nodeScenario } from '../node-scenario.ts';

/**
 * The training doctor on real runs: a healthy run per seed (any finding is false) and runs
 * provoked to fail (learning rate 30× too high; no entropy bonus at temperature 0.3; a level too
 * easy), each checked for the finding it should raise. It runs `e2e/bench/doctor-node.ts` (the
 * page's pipeline, trainer and doctor in node): a page run per arm would take many minutes each.
 */
export default nodeScenario({
  name: 'doctor',
  description:
    "the training doctor on real runs, in node (e2e/bench/doctor-node.ts, not the page: a page run per arm is too slow): healthy runs' false findings, and whether each provoked fault (--arms lr-high,no-entropy,saturated) raises its finding (--seeds, --seconds, --maxVersions per run)",
  script: 'doctor-node.ts',
  options: ['arms', 'seeds', 'seconds', 'maxVersions', 'out'],
  key: 'doctor.runs',
});
