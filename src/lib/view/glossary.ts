/**
 * The page's explanations in one place: what each setting, figure and button of the run and
 * pipeline panels means. A panel shows them as a glossary (`<dt>label</dt><dd>explanation</dd>`),
 * a tooltip (`title`) or a hint. `{name}` in an explanation takes a value from `explain`;
 * `*words*` are emphasised (see `emphasis`).
 */

/** A term of the glossary: how the panel names it and what it means. */
export interface GlossaryEntry {
  /** The term as the panel names it (a setting, a figure, a button). */
  readonly label: string;
  /** What it means: a sentence for a tooltip, a paragraph for a glossary. */
  readonly explanation: string;
}

export const GLOSSARY = {
  // The run panel: its introduction and its glossary "What the settings mean".
  runIntro: {
    label: 'Train the code-writing policy',
    explanation:
      'Asynchronous RL (AReaL-style): rollout workers play episodes with the newest version they hold while the trainer updates; a job starts only while it stays within η versions of the trainer. η = 0 is synchronous: collect a batch, train, publish, repeat.',
  },
  eta: {
    label: 'staleness η',
    explanation:
      "How many versions the rollouts may run ahead of the trainer. 0: collect a batch, train, publish, repeat (synchronous RL). Larger: workers keep playing while the trainer trains (AReaL's asynchronous RL), on weights up to η versions old.",
  },
  loss: {
    label: 'loss: decoupled PPO, PPO clip',
    explanation:
      "PPO clip: a token whose ratio π_θ / π_behav has already left 1 ± ε in the direction its advantage pushes gives no gradient, so a stale sample cannot pull the policy far. Decoupled PPO (AReaL) takes the ratio to the trainer's own weights just before the update (π_prox) instead, weighs each token by w = π_prox / π_behav, which corrects for older weights having sampled it, and leaves out tokens whose w is above 5. w averages 1 over the sampled tokens: most get a little less, a few much more. With one update per batch (the default) the update starts at π_prox, so the decoupled clip does not act: the loss is −w·A.",
  },
  updatesPerBatch: {
    label: 'updates / batch',
    explanation:
      "Adam steps on each batch, with π_prox held fixed across them (PPO epochs). From the second step the policy has moved away from π_prox: the clip fraction and approx KL (their values at the batch's last step) rise above 0 under decoupled PPO too. More steps squeeze more out of each batch, at the price of more trainer time a version.",
  },
  advantages: {
    label: 'advantages: RLOO, GRPO, GAE',
    explanation:
      "How much better an episode did than expected. RLOO: its reward minus the mean of the other episodes of its group (the same task, played by one job); GRPO: the reward standardised within the group; GAE: from the value head's predictions, token by token, then standardised over the batch.",
  },
  hindsight: {
    label: 'hindsight, pose relabelled',
    explanation:
      'A program that missed its task still computes something: relabelled with its own outputs it is a solved example of another task. Relabelled rows train as solved examples with a fixed advantage of +1 and w = 1 (no worker sampled them for that task): by default 32 of every 48 rows of a batch. The clip, KL, w and lag figures count only sampled tokens. Some relabelled tasks are also posed as jobs.',
  },
  replay: {
    label: 'replay',
    explanation:
      'Each sample trained once (first in, first out), or drawn again by priority (the samples the policy learns most from), with importance weights.',
  },
  adopt: {
    label: 'adopt new weights',
    explanation:
      'When a worker switches to a newly published version: at its next token (an episode may then be written by several versions: an interrupt), or only at a moment when one of its episodes is between turns (its other episodes then switch mid-turn).',
  },
  curriculum: {
    label: 'curriculum',
    explanation:
      'Easy tasks first; the next level once the level’s training tasks succeed in 70% of their last 20 episodes (each task counted alike, an episode not played yet as a failure).',
  },
  rolloutWorkers: {
    label: 'rollout workers',
    explanation:
      "Workers that play episodes at the same time, each with its own copy of the policy and its own sandbox. They share the machine's cores with the trainer: the bottleneck advisor says when there are too many.",
  },
  learningRate: {
    label: 'learning rate',
    explanation:
      "Adam's step size, {learningRate} at the start. It can halve every so many versions, down to a tenth, so that late versions move the greedy answers less.",
  },
  lora: {
    label: 'train: every parameter, LoRA',
    explanation:
      'Train small low-rank adapters on a frozen base instead of every weight (the value head is trained whole): each version holds only the adapters and the value head, far smaller. Measured here, LoRA on fresh weights barely learns: start from a trained run.',
  },
  startFrom: {
    label: 'start from',
    explanation:
      'Fresh weights, a built-in base (a policy that ships with the page, trained on the easy level until it solved half its training tasks), or the newest stored version of another run: its weights only (Adam starts afresh), in a run of its own. With LoRA that version is the frozen base.',
  },
  trainOn: {
    label: 'train on',
    explanation:
      'The built-in suite\'s training tasks, or a suite of your own. Held-out tasks are always the built-in suite\'s, so that "held-out" means tasks the run never trained on.',
  },
  loraFresh: {
    label: 'LoRA on fresh weights',
    explanation:
      'LoRA adapts a base policy; on fresh weights there is nothing to adapt (in the learn bench, LoRA rank 4 from fresh weights stayed at the constants, 0.27 on the training tasks after 300 s). Train a run with every parameter first and pick it in "start from".',
  },

  // The run panel's tooltips.
  presetTip: {
    label: 'preset',
    explanation:
      'presets for teaching: each sets η, the loss, when workers adopt new weights, the curriculum and the kind of task (tool use: one example shown, <run> reports on the task’s tests)',
  },
  taskKindTip: {
    label: 'tasks',
    explanation:
      'the built-in tasks a new run trains and is evaluated on: examples shown (enough to write the program at once, with hindsight relabelling) or tool use (one example, four turns; <run> answers with a test report, relabelling off)',
  },
  updatesPerBatchTip: {
    label: 'updates / batch',
    explanation:
      'Adam steps on each batch (PPO epochs): from the second, the policy has moved away from π_prox, so the decoupled clip acts and approx KL rises',
  },
  hindsightTip: {
    label: 'hindsight',
    explanation:
      'add programs relabelled with their own outputs to each batch, as solved episodes of those tasks',
  },
  poseRelabelledTip: {
    label: 'pose relabelled',
    explanation:
      "share of jobs that pose a relabelled task from the pool instead of a training task: the policy's near misses on them widen what relabelling teaches",
  },
  poseRelabelledOffTip: {
    label: 'pose relabelled',
    explanation: 'no effect with hindsight off: there is no pool of relabelled tasks to pose',
  },
  varyRelabelledTip: {
    label: 'vary relabelled',
    explanation:
      'each relabelled program also gives this many variants with one token changed (a digit for a digit, an operator for an operator), relabelled with their own outputs: x+5 also teaches x-8, so the pool holds constants and operators the training tasks never reward',
  },
  varyRelabelledOffTip: { label: 'vary relabelled', explanation: 'no effect with hindsight off' },
  learningRateTip: {
    label: 'learning rate',
    explanation:
      'the learning rate can halve every so many versions, down to a tenth, so that late versions move less (Adam keeps its moments)',
  },
  gradClipTip: {
    label: 'gradient clip',
    explanation:
      'the gradient’s global norm is scaled down to this before each step (0.5); off (1 000, never reached), standard PPO’s unbounded w·A on stale tokens reaches the step, which the staleness preset shows',
  },
  loraTip: {
    label: 'train',
    explanation:
      'LoRA: train rank-r adapters on the attention and MLP matrices of a frozen base; every version after the first then holds only the adapters and the value head',
  },
  startFromTip: {
    label: 'start from',
    explanation:
      'fresh weights from the seed, a built-in base, or the newest version of a stored run (fine-tune it; with LoRA its policy is the frozen base the adapters adapt)',
  },
  trainOnTip: {
    label: 'train on',
    explanation:
      'the built-in suite\'s training tasks, or a suite of your own (write tasks in "Write a task" and add them to "my tasks", or import a suite); held-out tasks are always the built-in suite\'s',
  },
  stoppingTip: {
    label: 'Stopping…',
    explanation: 'the step in progress publishes its version (or the start finishes), then the run stops',
  },
  raceTip: {
    label: 'Race: sync vs async',
    explanation:
      'the same {samples} episodes from fresh weights twice: synchronously (η = 0), then asynchronously; each leg is a run of its own',
  },
  sweepTip: {
    label: 'Sweep η',
    explanation:
      "AReaL's staleness table: the same {samples} episodes from fresh weights at η = {etas}, each with standard PPO and with decoupled PPO; each a run of its own",
  },
  shareTip: {
    label: 'Share link',
    explanation:
      'a link to this page with these settings and seed (copied to the clipboard where the browser allows)',
  },
  shareAsync: {
    label: 'an asynchronous run differs',
    explanation:
      'With η > 0 the link repeats these settings and seed, not the run: which version each episode samples from depends on timing. At η = 0 the same settings and seed give the same run on the same machine and backend.',
  },
  showRunTip: { label: 'Show', explanation: "show this run's stored charts and timeline" },
  deleteRunTip: { label: 'Delete', explanation: 'delete this run and everything stored of it' },
  deleteElsewhereTip: { label: 'Delete', explanation: 'another tab trains this run: stop it there first' },
  resumeRunTip: {
    label: 'Resume',
    explanation:
      'continue training this run from its newest stored version, with the settings it was started with (edits in the panel are for new runs)',
  },
  policyLossTip: {
    label: 'policy loss',
    explanation: 'the policy part of the loss; the total is this + 0.5 × value loss − 0.01 × entropy',
  },
  lagKlTip: {
    label: 'lag KL',
    explanation:
      'KL(π_behav ‖ π_prox), the mean of w − 1 − log w over sampled tokens: how far the samples lag (0 = on-policy)',
  },

  // The pipeline panel: its introduction, tooltips and glossary "What these figures mean".
  pipelineIntro: {
    label: 'Pipeline timeline',
    explanation:
      'One lane per rollout worker, the trainer and the parameter store; colour is the policy version a span ran with. A worker adopts a newly published version at its next decode step (or, if chosen, the next moment one of its episodes is between turns): an *interrupt* when episodes are in flight, which it keeps, stamping each token with the version that wrote it.',
  },
  slotStatesTip: {
    label: 'slots',
    explanation:
      'rollout slots by state: running a job, blocked (free but held by the staleness bound η), idle (free, nothing admitted: paused), or how the last job ended (completed, preempted, failed) until the slot is settled',
  },
  slotsHeldTip: {
    label: 'slots held by η',
    explanation: 'free slots no job may start in until the trainer publishes: the staleness bound η',
  },
  rolloutsOnTip: {
    label: 'rollouts on',
    explanation: "the rollout workers' inference backend and the sandbox their programs run in",
  },
  hindsightFigureTip: {
    label: 'hindsight',
    explanation:
      'programs relabelled with their own outputs (distinct tasks in the pool; jobs that posed one of them as a task)',
  },
  decontaminatedTip: {
    label: 'decontaminated',
    explanation:
      'relabelled programs kept out of training because they compute a held-out or generalisation task (their outputs at that task’s inputs are its outputs)',
  },
  lagTip: {
    label: 'lag',
    explanation:
      'mean over the groups trained in the last 1 000 versions of how far behind the trainer their oldest token was: in versions, and in samples (episodes trained since that version was published, as PipelineRL counts it)',
  },
  versionBytesTip: {
    label: 'bytes / version',
    explanation:
      'what each rollout worker receives per version: every parameter, or with LoRA the adapters and the value head',
  },
  version: {
    label: 'version',
    explanation:
      'How many times the trainer has published new weights. Every token is stamped with the version that wrote it.',
  },
  staleness: {
    label: 'η (eta) and staleness',
    explanation:
      'A group is *k versions stale* when its oldest token was written k versions before the one being trained. η bounds how far rollouts may run ahead of the trainer; η = 0 is synchronous RL.',
  },
  trainerBusy: {
    label: 'trainer busy',
    explanation:
      'The share of the time the trainer was computing a step (100% = rollouts never kept it waiting).',
  },
  groups: {
    label: 'groups, slots, buffered',
    explanation:
      'A group is one task played several times (the samples whose rewards are compared). Slots are the groups the workers can play at once; waiting groups are requeued or preempted ones, and new ones drawn ahead (queueAhead), with their mean wait; a slot budget holds a group whose expected cost does not fit (over budget: groups that used more); slots held by η are free slots the staleness bound keeps idle until the next version; buffered groups wait for the trainer.',
  },
  interrupt: {
    label: 'interrupt',
    explanation:
      'Episodes that switched to newer weights mid-way: their worker adopted a version while they were in flight, and they went on with it (one timeline mark can cover several).',
  },
  staleDrop: {
    label: 'stale drop',
    explanation: 'A finished group more than η versions old at training time, thrown away untrained.',
  },
  preemption: {
    label: 'preemption, requeued',
    explanation:
      'Preemption: a running job set aside, with every slot busy, for a waiting one (a requeued job of a higher class, or one expecting a return higher by the margin); it resumes later from what it had played. Requeued: a job given to another worker after its worker failed.',
  },
  cacheHitRate: {
    label: 'cache hit rate',
    explanation: 'Sandbox runs answered from the cache of programs already run on the same inputs.',
  },
  hindsightPosed: {
    label: 'hindsight, posed',
    explanation:
      'Programs the policy wrote, relabelled as tasks with their own outputs (so a wrong answer still teaches something); posed: jobs that asked one of them as a task.',
  },
  adoptP95: {
    label: 'adopt p95',
    explanation:
      "95th percentile, over versions, of the time from a version's publish until every running worker has adopted it.",
  },
  probabilities: {
    label: 'π_behav, π_prox, w',
    explanation:
      "π_behav: the probability the sampling worker gave a token; π_prox: the probability under the trainer's weights just before the step; w = π_prox / π_behav weighs each token in decoupled PPO (tokens with w above the cap are masked). Over sampled tokens w averages 1 however stale they are; how far they lag shows in w max, the masked share and the lag chart, KL(π_behav ‖ π_prox). Standard PPO computes no π_prox: its lag chart stays at 0, and its lag shows in the clip fraction.",
  },
  clipKl: {
    label: 'clip fraction, approx KL',
    explanation:
      'Tokens whose ratio left 1 ± ε, and how far the policy is from the one the ratio is taken to. Decoupled PPO takes it to π_prox: with one update per batch the step starts at π_θ = π_prox, so both stay 0 and the lag shows in the lag chart instead. Standard PPO takes it to π_behav: samples played by older versions clip, and approx KL rises with staleness. More updates per batch (PPO epochs) raise both.',
  },
} as const satisfies Readonly<Record<string, GlossaryEntry>>;

/** A term the glossary explains. */
export type GlossaryTerm = keyof typeof GLOSSARY;

/** The run panel's glossary, "What the settings mean", in its order. */
export const RUN_SETTINGS_TERMS: readonly GlossaryTerm[] = [
  'eta',
  'loss',
  'updatesPerBatch',
  'advantages',
  'hindsight',
  'replay',
  'adopt',
  'curriculum',
  'rolloutWorkers',
  'learningRate',
  'lora',
  'startFrom',
  'trainOn',
];

/** The pipeline panel's glossary, "What these figures mean", in its order. */
export const PIPELINE_FIGURE_TERMS: readonly GlossaryTerm[] = [
  'version',
  'staleness',
  'trainerBusy',
  'groups',
  'interrupt',
  'staleDrop',
  'preemption',
  'cacheHitRate',
  'hindsightPosed',
  'adoptP95',
  'probabilities',
  'clipKl',
];

/** The explanation of `term`, its `{name}` placeholders filled from `values` (left as they are where absent). */
export function explain(term: GlossaryTerm, values: Readonly<Record<string, string | number>> = {}): string {
  return GLOSSARY[term].explanation.replace(/\{(\w+)\}/g, (whole, name: string) =>
    Object.hasOwn(values, name) ? String(values[name]) : whole,
  );
}

/** A text cut into plain and emphasised runs (`*words*` are emphasised), for a panel to render. */
export function emphasis(text: string): { text: string; em: boolean }[] {
  return text
    .split('*')
    .map((part, i) => ({ text: part, em: i % 2 === 1 }))
    .filter((s) => s.text !== '');
}
