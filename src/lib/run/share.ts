import { shareUrl } from '../pipeline/share';
import { validateSettings, type RunSettings } from '../pipeline/run-settings';

/** A link to the page at `base` with `settings` (`pipeline/share.ts`); throws for settings a run would refuse. */
export async function shareLinkFor(base: string, settings: RunSettings): Promise<string> {
  validateSettings(settings);
  return shareUrl(base, settings);
}

/** Copies `text` to the clipboard where the browser allows; whether it did. */
export async function copied(text: string): Promise<boolean> {
  const clipboard = typeof navigator === 'undefined' ? undefined : navigator.clipboard;
  return (
    (await clipboard?.writeText(text).then(
      () => true,
      () => false,
    )) ?? false
  );
}
