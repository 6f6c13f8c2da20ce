import { errorMessage } from '../errors';
import { settingsFromJson, settingsToJson, validateSettings, type RunSettings } from './run-settings';

/**
 * A share link (DESIGN §9): a run's settings and seed in the page's URL (`?run=…`, base64url
 * JSON), so that a class opens the same configuration. "start from" names a run stored in one
 * browser's IndexedDB, so a link never carries it.
 */

/** The URL parameter that carries shared settings. */
export const SHARE_PARAM = 'run';

const toBase64Url = (text: string): string => {
  const bytes = new TextEncoder().encode(text);
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

const fromBase64Url = (s: string): string => {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('it is not base64url text');
  const binary = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
};

/** The value of `?run=` for `settings`. */
export function shareParam(settings: RunSettings): string {
  return toBase64Url(JSON.stringify(settingsToJson({ ...settings, startFrom: null })));
}

/**
 * The longest share link made, in characters. Servers refuse longer request lines (nginx's and
 * many hosts' limit is 8 KB; the page's own preview server answered 431 to a 28 KB link), and the
 * browser then shows no page at all.
 */
export const SHARE_URL_MAX = 8_000;

/**
 * `base` (a page URL) with `settings` as its share parameter; its other parameters are kept.
 * Throws, saying why, when the link would be longer than `SHARE_URL_MAX` (a suite of one's own
 * with many tasks travels in it).
 */
export function shareUrl(base: string, settings: RunSettings): string {
  const url = new URL(base);
  url.searchParams.set(SHARE_PARAM, shareParam(settings));
  const link = url.toString();
  if (link.length > SHARE_URL_MAX) {
    const tasks = settings.tasks
      ? `: the ${settings.tasks.tasks.length} tasks of "${settings.tasks.name}" travel in it. Share the suite file (Export in the tasks panel) and a link made with the built-in tasks: whoever opens it imports the file and chooses it in "train on"`
      : '';
    throw new Error(
      `the link would be ${link.length.toLocaleString('en-US')} characters long, more than the ${SHARE_URL_MAX.toLocaleString('en-US')} a web server reliably accepts${tasks}`,
    );
  }
  return link;
}

/**
 * The settings a share parameter carries, read and validated as a stored run's settings are.
 * Throws a message that says what is wrong with the link.
 */
export function settingsFromShare(param: string): RunSettings {
  let json: unknown;
  try {
    json = JSON.parse(fromBase64Url(param));
  } catch (err) {
    throw new Error(`the share link's settings cannot be read (${errorMessage(err)}): was it cut short?`, {
      cause: err,
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error("the share link's settings are not an object of settings");
  const settings = { ...settingsFromJson(json as Record<string, unknown>), startFrom: null };
  try {
    validateSettings(settings);
  } catch (err) {
    throw new Error(`the share link's settings are not valid: ${errorMessage(err)}`, { cause: err });
  }
  return settings;
}
