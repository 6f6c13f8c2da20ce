/**
 * The explanations of the page's layout: what the first screen's parts and figures show, and
 * what each view is for. Shown where the thing stands, on hover and keyboard focus (`Term`);
 * the settings' and figures' own terms are in `glossary`. `*words*` are emphasised.
 */
import type { GlossaryEntry } from './glossary';

export const PAGE_TERMS = {
  about: {
    label: 'what is this?',
    explanation:
      "A small transformer writes a JavaScript expression token by token for each task; a sandbox runs it on the task's hidden tests and the reward says how well it did. Rollout workers play episodes while the trainer updates the policy (AReaL's asynchronous RL). Every version of the weights is stored in this browser: a run survives a reload.",
  },
  train: {
    label: 'Train',
    explanation:
      'Starts a new run from fresh weights with the preset and the other settings (Settings view); it trains until Stop. Each run is stored: the Runs view resumes, shows and compares them.',
  },
  watch: {
    label: 'what to watch',
    explanation: 'What this preset shows, and where to look.',
  },
  flow: {
    label: 'data flow',
    explanation:
      'One turn of the loop: workers play episodes with the newest version they hold, the sandbox runs each program, finished groups wait in the buffer, the trainer takes a batch and publishes the next version, and the workers adopt it.',
  },
  workers: {
    label: 'rollout workers',
    explanation:
      'Each worker holds a copy of the policy and plays *groups*: one task played several times, so that the rewards can be compared. Running: the groups in play now, of the slots the workers have.',
  },
  sandbox: {
    label: 'sandbox',
    explanation:
      "QuickJS in each worker runs every program on the task's inputs, with a deadline and a memory limit and no access to the page. The cache answers a program already run on the same inputs.",
  },
  buffer: {
    label: 'buffer',
    explanation:
      'Finished groups wait here for the trainer. A group more than η versions old when its turn comes is dropped untrained (a *stale drop*).',
  },
  trainerBox: {
    label: 'trainer',
    explanation:
      'Takes a batch of groups, computes the loss (decoupled PPO by default) and takes an Adam step, then publishes the next version. Busy: the share of the time it computed rather than waited for data.',
  },
  store: {
    label: 'parameter store',
    explanation:
      'Holds each published version. A worker adopts the newest at its next token: an *interrupt* when an episode is in flight, which goes on with the new weights.',
  },
  feed: {
    label: 'program feed',
    explanation:
      'The newest finished episodes, newest first: the examples the policy was shown, each turn’s program with every token coloured by the version that wrote it (an episode written by several versions adopted a new one mid-way: an interrupt), and what the sandbox answered: on a tool-use task (one example shown), the *test report* each <run> got back — pass N of M and the first failing tests, input, expected and got — and whether the next turn *revised* the program. Below: the best program found per task.',
  },
  sandboxCall: {
    label: 'sandbox call',
    explanation:
      "A tick on an episode bar of the timeline: one of the group's episodes ended a turn with <run> or <submit>, and the sandbox ran its program (on a tool-use task, a <run> answers with a test report). The ticks ride on the group's episode event: they add no event to the log.",
  },
  blockedSlot: {
    label: 'blocked slot',
    explanation:
      "A grey hatched bar on a rollout worker's lane: one of its slots was free but the staleness bound η held it, so no job could start there until the trainer published a version (at η = 0, every slot past the batch while it plays, and all of them while the trainer trains). Its tooltip names the slot.",
  },
  success: {
    label: 'greedy success',
    explanation:
      'Every few versions the policy answers each task once, greedily (its most likely token each time). *Training* tasks are those it trains on; *held-out* tasks come from the same families but are never trained on; *generalisation* tasks are held-out tasks at other inputs and programs outside every family.',
  },
  sweepChart: {
    label: 'success against η',
    explanation:
      "The staleness sweep: each point is a run of its own (with several seeds, their mean, its bar ±1 sd) from fresh weights over the same episodes, at one staleness η (a bound, or held there: the staleness preset's runs play the weights η versions back) with one policy loss, scored greedily on its level's training tasks when it ends. AReaL's Table 3 finds standard PPO falling behind decoupled PPO as η grows. The table under the chart says how far each run's samples lagged.",
  },
  trainerView: {
    label: 'Trainer worker',
    explanation:
      'A check of the trainer worker, apart from any run: one gradient step of the transformer policy per click, on the backend shown above, on imitation batches that teach it a few programs, so the loss should fall. Starting a run resets these weights.',
  },
  tasksView: {
    label: 'Tasks and evaluation',
    explanation:
      'Each task shows a few examples such as f(1)=3 ; f(2)=5; the policy writes an expression in x, may run it on the examples, and submits it to the hidden tests. Held-out tasks are never trained on; an imported suite is all held out.',
  },
  editorView: {
    label: 'Write a task',
    explanation:
      'A task is { id, level, examples: [{ input, output }], hidden: [...] }. Try a program on it (an expression in x, run in the sandbox as (x) => (program)), then add it to "my tasks".',
  },
  sandboxView: {
    label: 'Sandbox',
    explanation:
      "A program defines f; the sandbox calls f(input) for each input. QuickJS runs it in a worker with a deadline, a memory limit and no host access; WebContainer runs real Node.js when StackBlitz's servers can be reached.",
  },
  customView: {
    label: 'Custom JS environment',
    explanation:
      'Define spec = { observations, actions, maxSteps }, reset() → observation and step(action) → { observation, reward, done }. The code runs in a QuickJS sandbox in each rollout worker (100 ms a call, 16 MiB); an MLP policy learns it with decoupled PPO through the same asynchronous pipeline. Each Train starts from a fresh policy with the code as it is then. Trainings are stored (the newest 5 versions, version 0 and every 10th): the table compares them, gives back their code, and resumes one that stopped short.',
  },
  customTimeline: {
    label: 'timeline',
    explanation:
      "The same timeline as the code-writing run's: each group of episodes on its worker's lane, each update on the trainer's, each publish on the store's. At η = 0 they take turns; at η ≥ 1 they overlap.",
  },
  events: {
    label: 'Timeline events',
    explanation:
      'Every component emits { lane, kind, t0, t1, version, meta }; the timeline draws them. The newest eight are listed here.',
  },
} as const satisfies Readonly<Record<string, GlossaryEntry>>;

/** A part of the page `PAGE_TERMS` explains. */
export type PageTerm = keyof typeof PAGE_TERMS;

/** What `term` means. */
export function about(term: PageTerm): string {
  return PAGE_TERMS[term].explanation;
}
