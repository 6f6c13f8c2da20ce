/**
 * What the first screen's notice strip says of the doctor's findings (pure): one line for the
 * strip, a mark per severity, a finding's evidence as text, and the marks the charts draw where
 * each finding fired.
 */
import type { TimelineEvent } from '../pipeline/events';
import type { DetectorId, Finding, Severity } from '../stats/doctor';
import type { FindingRecord } from '../stats/doctor-tracker';

/** A mark per severity, read out with its word (the strip's colour is not the only sign). */
export const SEVERITY_MARK: Readonly<Record<Severity, string>> = { critical: '⛔', warning: '⚠', info: 'ℹ' };

/** The strip's one line: the most serious finding's title and version, and how many more stand. */
export function stripSummary(findings: readonly Finding[]): string {
  const [first, ...rest] = findings;
  if (!first) return '';
  const more = rest.length ? ` · ${rest.length} more` : '';
  return `${SEVERITY_MARK[first.severity]} ${first.title} (version ${first.version})${more}`;
}

/** The numbers a finding rests on, as `name value` pairs separated by middle dots. */
export function evidenceText(f: Pick<Finding, 'evidence'>): string {
  return f.evidence
    .map((e) => `${e.name} ${Number.isFinite(e.value) ? e.value : String(e.value)}`)
    .join(' · ');
}

/** The most serious severity among `findings` (the strip's colour), or null when none stands. */
export function worstSeverity(findings: readonly Finding[]): Severity | null {
  const order: Severity[] = ['critical', 'warning', 'info'];
  return order.find((s) => findings.some((f) => f.severity === s)) ?? null;
}

/** When a finding stood: `since version 110`, or `version 110 to 154` once withdrawn. */
export function spellText(r: Pick<FindingRecord, 'firedAt' | 'withdrawnAt'>): string {
  return r.withdrawnAt === null ? `since version ${r.firedAt}` : `version ${r.firedAt} to ${r.withdrawnAt}`;
}

/** The spells newest first, standing ones before withdrawn ones (the Figures view's list). */
export function spellsShown(history: readonly FindingRecord[]): FindingRecord[] {
  const standing = history.filter((r) => r.withdrawnAt === null);
  const withdrawn = history.filter((r) => r.withdrawnAt !== null);
  return [...standing.reverse(), ...withdrawn.reverse()];
}

/** A severity's colour where a mark is drawn (app.css's --bad, --warn and --accent). */
export const SEVERITY_COLOR: Readonly<Record<Severity, string>> = {
  critical: '#f87171',
  warning: '#fbbf24',
  info: '#38bdf8',
};

/** A finding drawn where it fired: on the success chart at its version, on the timeline at that version's publish. */
export interface DoctorMark {
  version: number;
  id: DetectorId;
  severity: Severity;
  color: string;
  /** What the mark says in words: `⚠ Learning has stalled (version 210)`. */
  label: string;
}

/** One mark per spell at the version it fired, oldest first (the tracker's history order). */
export function doctorMarks(history: readonly FindingRecord[]): DoctorMark[] {
  return history
    .map(({ firedAt, finding: f }) => ({
      version: firedAt,
      id: f.id,
      severity: f.severity,
      color: SEVERITY_COLOR[f.severity],
      label: `${SEVERITY_MARK[f.severity]} ${f.title} (version ${firedAt})`,
    }))
    .sort((a, b) => a.version - b.version);
}

/**
 * The marks the timeline can place: each at the time the parameter store published its version
 * (epoch ms); a mark whose version's publish the events no longer hold is left out.
 */
export function timedMarks(
  marks: readonly DoctorMark[],
  events: readonly Pick<TimelineEvent, 'kind' | 'lane' | 'version' | 't1'>[],
): (DoctorMark & { t: number })[] {
  if (!marks.length) return [];
  const published = new Map<number, number>();
  for (const e of events) if (e.kind === 'publish' && e.lane === 'store') published.set(e.version, e.t1);
  return marks.flatMap((m) => {
    const t = published.get(m.version);
    return t === undefined ? [] : [{ ...m, t }];
  });
}
