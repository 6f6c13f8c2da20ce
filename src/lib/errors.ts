/** Errors as a user reads them. Free of the UI and of storage: any module may use it. */

/**
 * Words a browser's quota refusal carries when its name was lost on the way (a message passed
 * on as text): "The quota has been exceeded.", "QuotaExceededError: …". Only these: a message
 * that merely mentions a quota (a suite named "API quota drills", an environment's own
 * `throw new Error('step quota reached')`) is no storage refusal.
 */
const QUOTA_WORDS =
  /\bquota\s+(?:has\s+been\s+|was\s+|is\s+)?exceeded\b|\bexceeded\s+(?:the\s+)?(?:storage\s+)?quota\b|QuotaExceededError/i;

/** True for a write refused because the origin's storage quota is full. */
export function isQuotaError(err: unknown): boolean {
  if (!(err instanceof Error) && !(typeof DOMException !== 'undefined' && err instanceof DOMException))
    return false;
  const e = err as { name?: string; message?: string; cause?: unknown };
  if (e.name === 'QuotaExceededError') return true;
  if (QUOTA_WORDS.test(e.message ?? '')) return true;
  return e.cause !== undefined && isQuotaError(e.cause);
}

/** What a refused write means, in words (Chromium's QuotaExceededError has an empty message). */
export const STORAGE_FULL =
  "this site's storage in the browser is full: delete stored runs or trainings here, or free space in the browser's settings, and try again";

/** A value as a message shows it: a number as it is, anything else as JSON (`""`, `"x"`, `true`). */
export const shown = (v: unknown): string =>
  typeof v === 'number' ? String(v) : (JSON.stringify(v) ?? String(v));

/** A number field's value as a message shows it: an empty field (null from a number input) is "nothing". */
export const shownNumber = (v: unknown): string => (v === null || v === '' ? 'nothing' : shown(v));

/** Anything thrown, as a message that is never empty: a quota refusal says that the storage is full. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error || (typeof DOMException !== 'undefined' && err instanceof DOMException)) {
    const { name, message } = err;
    // A message that already says so (withEviction's) stays; a bare or technical one gets the words.
    if (isQuotaError(err) && !/full/i.test(message))
      return message ? `${STORAGE_FULL} (${message})` : STORAGE_FULL;
    if (message) return message;
    return name && name !== 'Error' ? name : 'an error with no message';
  }
  const text = String(err);
  return text === '' ? 'an error with no message' : text;
}
