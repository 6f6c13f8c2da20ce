/**
 * The doctor's memory over a run: which findings stand now, when each fired and when it was
 * withdrawn. A finding is withdrawn once its detector has been quiet for `clearAfter` diagnoses in
 * a row, so a series near its threshold does not flap on and off at every step.
 */
import { DETECTOR_IDS, type DetectorId, type Finding } from './doctor';

/** One spell of a finding: from the version it fired to the one it was withdrawn at (null: standing). */
export interface FindingRecord {
  id: DetectorId;
  firedAt: number;
  withdrawnAt: number | null;
  /** The finding as last diagnosed: its newest evidence while it stands, the last before withdrawal after. */
  finding: Finding;
}

/** What one update changed. */
export interface DoctorChange {
  fired: DetectorId[];
  withdrawn: DetectorId[];
}

/** Spells kept in the history: a detector that fires and clears all run long stays bounded. */
export const HISTORY_KEPT = 200;

export class DoctorTracker {
  private readonly records: FindingRecord[] = [];
  /** Standing records by detector, and the diagnoses in a row each has been absent from. */
  private readonly standing = new Map<DetectorId, { record: FindingRecord; quiet: number }>();

  constructor(private readonly clearAfter: number) {}

  /**
   * Takes the diagnosis made at `version`: new findings fire, standing ones take the newest
   * evidence, and those quiet for `clearAfter` diagnoses are withdrawn at `version`.
   */
  update(findings: readonly Finding[], version: number): DoctorChange {
    const change: DoctorChange = { fired: [], withdrawn: [] };
    const now = new Set<DetectorId>();
    for (const f of findings) {
      now.add(f.id);
      const held = this.standing.get(f.id);
      if (held) [held.record.finding, held.quiet] = [f, 0];
      else {
        const record: FindingRecord = { id: f.id, firedAt: f.version, withdrawnAt: null, finding: f };
        this.records.push(record);
        if (this.records.length > HISTORY_KEPT) this.records.splice(0, this.records.length - HISTORY_KEPT);
        this.standing.set(f.id, { record, quiet: 0 });
        change.fired.push(f.id);
      }
    }
    for (const [id, held] of this.standing) {
      if (now.has(id) || ++held.quiet < this.clearAfter) continue;
      held.record.withdrawnAt = version;
      this.standing.delete(id);
      change.withdrawn.push(id);
    }
    return change;
  }

  /** The standing findings, most serious detector first (`DETECTOR_IDS` order). */
  get current(): Finding[] {
    return DETECTOR_IDS.flatMap((id) => {
      const held = this.standing.get(id);
      return held ? [held.record.finding] : [];
    });
  }

  /** Every spell, oldest first (at most `HISTORY_KEPT`): a copy. */
  get history(): FindingRecord[] {
    return this.records.map((r) => ({ ...r }));
  }

  /** Forgets everything (a new run). */
  reset(): void {
    this.records.length = 0;
    this.standing.clear();
  }
}
