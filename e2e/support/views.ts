import { expect, type Page } from '@playwright/test';
import { hashOf, VIEWS, type ViewId } from '../../src/lib/view/views.ts';

export { VIEWS, type ViewId };

/** Opens a view of the page through the URL hash, as its link does, and waits until it shows. */
export async function openView(page: Page, view: ViewId): Promise<void> {
  await page.evaluate((hash) => {
    location.hash = hash;
  }, hashOf(view));
  await expect(page.getByTestId(`view-${view}`)).toBeVisible();
}
