import { nodeScenario } from '../node-scenario.ts';

/**
 * The update strategies side by side (DESIGN §5): `e2e/bench/strategies-node.ts` in node, the
 * page's trainer and pipeline per strategy and seed at equal versions (η = 0: the same episodes),
 * and the optimiser step alone per strategy, interleaved.
 */
export default nodeScenario({
  name: 'strategies',
  description:
    'update strategies in node (e2e/bench/strategies-node.ts): per strategy, success at equal versions, trainer ms per step and per version, bytes per stored version, tensors trained, auto’s switches, mean ± sd over --seeds (--versions, --strategies, --stepRounds)',
  script: 'strategies-node.ts',
  options: ['seeds', 'versions', 'strategies', 'stepRounds'],
  key: 'strategies',
});
