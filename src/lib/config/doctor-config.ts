/**
 * The training doctor's rules (`stats/doctor.ts`): the run config's `doctor` group, a threshold
 * and a window for each detector. Windows count versions, so a thinned history reads the same.
 */
export interface DoctorConfig {
  /** Versions trained before any detector reads the series: the first steps are noisy by nature. */
  warmup: number;
  /**
   * Versions the stagnant and one-family detectors stay quiet for: a healthy run first sits on the
   * constants plateau (bare constants, success ≈ 0.27) and leaves it on its own.
   */
  plateauGrace: number;
  /** Diagnoses in a row a finding must be clear for before it is withdrawn, so a noisy series does not flap. */
  clearAfter: number;
  /** Versions the trend detectors (stagnant, falling) fit a line over. */
  trendWindow: number;
  /** Stagnant: the fitted change of the mean return over the trend window is smaller than this… */
  stagnantReturn: number;
  /** …and that of the sampled success smaller than this. */
  stagnantSuccess: number;
  /** Falling: the mean return fell by more than this over the trend window (fitted line)… */
  fallingReturn: number;
  /** …or the sampled success by more than this. */
  fallingSuccess: number;
  /** Versions the policy loss's volatility is measured over. */
  lossWindow: number;
  /** Volatile: the policy loss's standard deviation over the loss window is above this. */
  lossStd: number;
  /** Versions of entropy averaged, at the run's start and now. */
  entropyWindow: number;
  /**
   * Entropy collapse: the entropy now is below this fraction of the run's early entropy, success short
   * of saturated. A healthy default run may sharpen to a tenth of it while it still learns.
   */
  entropyFloor: number;
  /** Versions of per-task reward spread averaged (the spread of returns within each group). */
  spreadWindow: number;
  /** Echo trap: the spread now is below this fraction of its highest earlier window, success short of saturated. */
  spreadDrop: number;
  /** Versions of value loss averaged. */
  valueWindow: number;
  /** Value loss diverging: the value loss now is more than this multiple of its lowest earlier window. */
  valueGrowth: number;
  /** Versions searched for gradient-norm spikes. */
  spikeWindow: number;
  /** A spike: a gradient norm (before the clip) above this multiple of the window's median. */
  spikeFactor: number;
  /** Spikes in the window that make a finding. */
  spikeCount: number;
  /** Versions approx-KL, the clipped share and the staleness are averaged over. */
  updateWindow: number;
  /** Steps too large: the mean approx-KL of a step is above this… */
  maxKl: number;
  /** …or the mean share of clipped tokens above this. */
  maxClipFrac: number;
  /** Saturated: the sampled success over the saturation window is at least this (also the bar the collapse detectors stand aside at). */
  saturatedAt: number;
  /** Versions of sampled success the saturation detector averages. */
  saturationWindow: number;
  /** Too stale for standard PPO: its mean staleness (versions behind) is above this. */
  stalePpo: number;
  /** Too stale for decoupled PPO: its mean staleness is above this… */
  staleDecoupled: number;
  /** …or the share of tokens it masks (w above the cap) is above this. */
  maxMasked: number;
  /** The newest programs written that the program-family detector reads. */
  programWindow: number;
  /** Stuck: at least this share of those programs are a bare constant (no `x`)… */
  constantShare: number;
  /** …or at least this share are one and the same program. */
  sameShare: number;
}

export const DEFAULT_DOCTOR: DoctorConfig = {
  warmup: 30,
  plateauGrace: 600,
  clearAfter: 5,
  trendWindow: 200,
  stagnantReturn: 0.05,
  stagnantSuccess: 0.05,
  fallingReturn: 0.2,
  fallingSuccess: 0.15,
  lossWindow: 20,
  lossStd: 0.5,
  entropyWindow: 20,
  entropyFloor: 0.08,
  spreadWindow: 30,
  spreadDrop: 0.3,
  valueWindow: 30,
  valueGrowth: 5,
  spikeWindow: 50,
  spikeFactor: 5,
  spikeCount: 3,
  updateWindow: 20,
  maxKl: 0.05,
  maxClipFrac: 0.3,
  saturatedAt: 0.9,
  saturationWindow: 50,
  stalePpo: 2,
  staleDecoupled: 16,
  maxMasked: 0.05,
  programWindow: 48,
  constantShare: 0.9,
  sameShare: 0.6,
};
