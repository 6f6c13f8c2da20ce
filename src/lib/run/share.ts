import { shareUrl } from '../config/share-link';
import { validateRunConfig, type RunConfig } from '../config/run-config';

/** A link to the page at `base` with `settings` (`config/share-link.ts`); throws for settings a run would refuse. */
export async function shareLinkFor(base: string, settings: RunConfig): Promise<string> {
  validateRunConfig(settings);
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
