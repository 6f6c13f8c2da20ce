import { describe, expect, it } from 'vitest';
import { errorMessage, isQuotaError, STORAGE_FULL } from './errors';

describe('isQuotaError', () => {
  it('recognises quota errors, however they are wrapped', () => {
    expect(isQuotaError(new DOMException('full', 'QuotaExceededError'))).toBe(true);
    expect(isQuotaError(new Error('wrapped', { cause: new DOMException('x', 'QuotaExceededError') }))).toBe(
      true,
    );
    expect(isQuotaError(new Error('The quota has been exceeded.'))).toBe(true);
    expect(isQuotaError(new Error('QuotaExceededError: the write was refused'))).toBe(true);
    expect(isQuotaError(new Error('something else'))).toBe(false);
    // A message that only mentions a quota is no storage refusal.
    expect(isQuotaError(new Error('the run\'s tasks ("API quota drills") have no hard task'))).toBe(false);
    expect(isQuotaError(new Error('step quota reached'))).toBe(false);
    expect(isQuotaError('QuotaExceededError')).toBe(false);
  });
});

describe('errorMessage', () => {
  it("says the storage is full for Chromium's QuotaExceededError, whose message is empty", () => {
    expect(errorMessage(new DOMException('', 'QuotaExceededError'))).toBe(STORAGE_FULL);
    expect(errorMessage(new DOMException('', 'QuotaExceededError'))).toMatch(/storage .* is full/);
    // A technical message is kept beside the words; one that already says so stays as it is.
    expect(errorMessage(new Error('The quota has been exceeded.'))).toBe(
      `${STORAGE_FULL} (The quota has been exceeded.)`,
    );
    const evicted = new Error('storage is full even after deleting 3 old versions', {
      cause: new DOMException('', 'QuotaExceededError'),
    });
    expect(errorMessage(evicted)).toBe('storage is full even after deleting 3 old versions');
  });

  it('leaves a message that merely mentions a quota as it is', () => {
    const msg = 'the run\'s tasks ("API quota drills") have no hard task';
    expect(errorMessage(new Error(msg))).toBe(msg);
  });

  it('is never empty', () => {
    expect(errorMessage(new Error('bad input'))).toBe('bad input');
    expect(errorMessage(new DOMException('', 'AbortError'))).toBe('AbortError');
    expect(errorMessage(new Error(''))).toBe('an error with no message');
    expect(errorMessage('')).toBe('an error with no message');
    expect(errorMessage('worker gone')).toBe('worker gone');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
