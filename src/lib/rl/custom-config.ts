/** Training settings for the MLP policy of a custom environment. */
export interface CustomTrainConfig {
  /** Policy updates. */
  iterations: number;
  /** Episodes collected per update. */
  episodesPerIteration: number;
  /** Hidden width of the MLP. */
  hidden: number;
  /** Adam learning rate. */
  learningRate: number;
  /** Discount of returns-to-go. */
  gamma: number;
  /** Weight of the value loss ½(V − G)². */
  valueCoef: number;
  /** Weight of the entropy bonus. */
  entropyCoef: number;
  /** Seed of the initial weights and of action sampling. */
  seed: number;
}

export const DEFAULT_CUSTOM_TRAIN: CustomTrainConfig = {
  iterations: 40,
  episodesPerIteration: 10,
  hidden: 32,
  learningRate: 0.01,
  gamma: 0.99,
  valueCoef: 0.5,
  entropyCoef: 0.01,
  seed: 1,
};
