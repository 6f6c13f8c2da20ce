/**
 * The doctor over a live run: it gathers what the step reports do not carry — the programs the
 * policy writes, the curriculum's promotions, a step refused for a non-finite loss — diagnoses
 * the series at each step, and keeps the tracker's standing findings and history.
 */
import type { CurriculumView } from '../env/curriculum';
import { RUN, SUBMIT, tokenText } from '../env/vocab';
import type { EvalPoint, PlayedGroup, StepReport } from '../pipeline/types';
import { STEP_NOT_APPLIED } from '../policy/metrics';
import type { Trajectory } from '../rl/trajectory';
import { diagnose, type DoctorSettings, type Finding, type ProgramWritten } from './doctor';
import { DoctorTracker, type DoctorChange, type FindingRecord } from './doctor-tracker';

/** The program an episode ended on (its last turn's, submitted or run) and the newest version that wrote it. */
export function lastProgram(tr: Pick<Trajectory, 'tokens' | 'owned' | 'versions'>): ProgramWritten {
  let [current, last, version] = ['', '', -1];
  tr.tokens.forEach((id, i) => {
    if (tr.owned[i] !== 1) return;
    version = Math.max(version, tr.versions[i] ?? -1);
    if (id === RUN || id === SUBMIT) [last, current] = [current, ''];
    else current += tokenText(id);
  });
  // An episode cut short mid-program (its budget or context spent) ends on what it had written.
  return { version, program: current || last };
}

/** Whether a run's error says a step was refused for a loss or gradient that was not finite. */
export const isRefusedStep = (message: string): boolean => message.includes(STEP_NOT_APPLIED);

export class TrainingDoctor {
  private readonly tracker: DoctorTracker;
  private programs: ProgramWritten[] = [];
  private readonly promotedAt: number[] = [];
  private readonly refused: number[] = [];
  /** Promotions the curriculum had made when last read. */
  private promotions: number | null = null;

  constructor(private readonly settings: DoctorSettings) {
    this.tracker = new DoctorTracker(settings.doctor.clearAfter);
  }

  /** Takes a played group's programs (the newest `programWindow` are kept). */
  played(group: {
    status: PlayedGroup['status'];
    trajectories: readonly Pick<Trajectory, 'tokens' | 'owned' | 'versions'>[];
  }): void {
    if (group.status === 'done') this.wrote(group.trajectories.map(lastProgram));
  }

  /** Takes programs written (a replayed run's record hands them over as they were read). */
  wrote(programs: readonly ProgramWritten[]): void {
    this.programs.push(...programs);
    const keep = this.settings.doctor.programWindow;
    if (this.programs.length > 2 * keep) this.programs = this.programs.slice(-keep);
  }

  /** Notes that the step from `version` was refused, when the run's error says so; returns whether it did. */
  failed(message: string, version: number): boolean {
    if (!isRefusedStep(message)) return false;
    this.refused.push(version);
    return true;
  }

  /**
   * Diagnoses the run's series as they stand (`steps` oldest first) and updates the standing
   * findings; a promotion the curriculum made since the last check counts from the newest step.
   */
  check(
    steps: readonly StepReport[],
    evals: readonly EvalPoint[] = [],
    curriculum: CurriculumView | null = null,
  ): DoctorChange {
    const version = Math.max(steps.at(-1)?.version ?? 0, ...this.refused);
    if (curriculum) {
      const made = curriculum.promotions.length;
      // The first reading is where a resumed run stood: its promotions are history, not news.
      if (this.promotions !== null && made > this.promotions) this.promotedAt.push(version);
      this.promotions = made;
    }
    const findings = diagnose(
      {
        steps,
        evals,
        programs: this.programs,
        refused: this.refused,
        promotedAt: this.promotedAt,
        ...(curriculum ? { curriculum } : {}),
      },
      this.settings,
    );
    return this.tracker.update(findings, version);
  }

  /** The standing findings, most serious first. */
  get current(): Finding[] {
    return this.tracker.current;
  }

  /** Every spell of a finding this run, oldest first. */
  get history(): FindingRecord[] {
    return this.tracker.history;
  }
}
