import { nodeScenario } from '../node-scenario.ts';

/**
 * The rollout schedules side by side (DESIGN §6): `e2e/bench/scheduling-node.ts` in node, the
 * page's pipeline per schedule and seed for the same training seconds.
 */
export default nodeScenario({
  name: 'scheduling',
  description:
    'rollout schedules in node (e2e/bench/scheduling-node.ts), each with the same queue (2 jobs drawn ahead) and slot budget (1 sandbox ms an episode): per pipeline.schedule, seconds to the easy training goal and to the whole goal, episodes/s, preemptions and resumes, requeues, mean queue wait, budget waits and overruns, final success, mean ± sd over --seeds (--seconds, --schedules, --eta)',
  script: 'scheduling-node.ts',
  options: ['seeds', 'seconds', 'schedules', 'eta'],
  key: 'scheduling',
});
