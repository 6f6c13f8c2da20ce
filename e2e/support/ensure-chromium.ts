import { ensureChromium } from './chromium.ts';

try {
  console.log(`e2e browser: ${ensureChromium()}`);
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
