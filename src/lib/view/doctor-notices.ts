/**
 * What the first screen's notice strip says of the doctor's findings (pure): one line for the
 * strip, a mark per severity, a finding's evidence as text.
 */
import type { Finding, Severity } from '../stats/doctor';
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
