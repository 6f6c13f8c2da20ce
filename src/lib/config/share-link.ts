import { errorMessage } from '../errors';
import {
  runConfigFromJson,
  runConfigToJson,
  validateRunConfig,
  type RunConfig,
  type StartFrom,
} from './run-config';
import { SHARE_PARAM } from './share-param';

/**
 * A share link (DESIGN §9): a run's settings and seed in the page's URL (`?run=…`, deflated
 * JSON as base64url), so that a class opens the same configuration. "start from" names a run stored in one
 * browser's IndexedDB, so a link never carries it.
 */

export { SHARE_PARAM };

const toBase64Url = (bytes: Uint8Array): string => {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
};

const fromBase64Url = (s: string): Uint8Array<ArrayBuffer> => {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) throw new Error('it is not base64url text');
  return Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
};

/**
 * A share parameter's prefix when its JSON is deflated ('.' is not base64url, so a link of the
 * older, plain form never starts so). Deflate takes a suite of one's own ~10 times smaller:
 * 100 built-in-sized tasks make a 3.8 KB link instead of 38 KB.
 */
const DEFLATED = 'z.';

/** The most a deflated parameter may inflate to: a link is at most a few MB, deflate up to ~1000×. */
const INFLATED_MAX = 8_000_000;

async function deflate(text: string): Promise<Uint8Array> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream('deflate-raw'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A link whose settings inflate past `INFLATED_MAX`: refused whole, and no sign of a cut. */
class ShareTooLargeError extends Error {}

/** The text `bytes` inflate to; throws past `INFLATED_MAX` bytes (a link built to blow up). */
async function inflate(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const reader = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate-raw')).getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > INFLATED_MAX) {
      await reader.cancel();
      throw new ShareTooLargeError(`it inflates to more than ${INFLATED_MAX} bytes`);
    }
    parts.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: true }).decode(all);
}

/** A built-in base travels in a link; a stored run (in one browser's storage) does not. */
const portable = (c: RunConfig): RunConfig => {
  const s: StartFrom | null = c.policy.startFrom;
  const startFrom = typeof s === 'object' && s !== null && 'base' in s ? s : null;
  return { ...c, policy: { ...c.policy, startFrom } };
};

/** The value of `?run=` for `settings`: their JSON, deflated, as base64url. */
export async function shareParam(settings: RunConfig): Promise<string> {
  const json = JSON.stringify(runConfigToJson(portable(settings)));
  return DEFLATED + toBase64Url(await deflate(json));
}

/**
 * The longest share link made, in characters. Servers refuse longer request lines (nginx's and
 * many hosts' limit is 8 KB; the page's own preview server answered 431 to a 28 KB link), and the
 * browser then shows no page at all. Deflated, some 250 built-in-sized tasks fit.
 */
export const SHARE_URL_MAX = 8_000;

/**
 * `base` (a page URL) with `settings` as its share parameter; its other parameters are kept, its
 * hash (the view it was made on) is not: the link opens the first screen, ready to train. Throws, saying why, when the link would be longer than `SHARE_URL_MAX` (a suite of one's own
 * with many tasks travels in it).
 */
export async function shareUrl(base: string, settings: RunConfig): Promise<string> {
  const url = new URL(base);
  url.hash = '';
  url.searchParams.set(SHARE_PARAM, await shareParam(settings));
  const link = url.toString();
  if (link.length > SHARE_URL_MAX) {
    const suite = settings.task.suite;
    const tasks = suite
      ? `: the ${suite.tasks.length} tasks of "${suite.name}" travel in it. Share the suite file (Export in the tasks panel) and a link made with the built-in tasks: whoever opens it imports the file and chooses it in "train on"`
      : '';
    throw new Error(
      `the link would be ${link.length.toLocaleString('en-US')} characters long, more than the ${SHARE_URL_MAX.toLocaleString('en-US')} a web server reliably accepts${tasks}`,
    );
  }
  return link;
}

/**
 * The settings a share parameter carries (deflated, or of the older plain form), read and
 * validated as a stored run's settings are. Rejects with a message that says what is wrong.
 */
export async function settingsFromShare(param: string): Promise<RunConfig> {
  let json: unknown;
  try {
    // A link of the older form carries its JSON as it is.
    const text = param.startsWith(DEFLATED)
      ? await inflate(fromBase64Url(param.slice(DEFLATED.length)))
      : new TextDecoder('utf-8', { fatal: true }).decode(fromBase64Url(param));
    json = JSON.parse(text);
  } catch (err) {
    // Only a link that ends early or is garbled reads as cut short; a refused inflation says why.
    const hint = err instanceof ShareTooLargeError ? '' : ': was it cut short?';
    throw new Error(`the share link's settings cannot be read (${errorMessage(err)})${hint}`, {
      cause: err,
    });
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new Error("the share link's settings are not an object of settings");
  const read = runConfigFromJson(json as Record<string, unknown>);
  const settings = portable(read);
  try {
    validateRunConfig(settings);
  } catch (err) {
    throw new Error(`the share link's settings are not valid: ${errorMessage(err)}`, { cause: err });
  }
  return settings;
}
