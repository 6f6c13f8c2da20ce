/// <reference types="vite/client" />
// vite/client: the page's modules behind these types import wasm files with `?url`.
import type { JSHandle, Page } from 'playwright-core';
import type {} from '../../src/global';

/** The page's state under the `?debug` URL flag, `window.__lab`, typed as src/global.d.ts declares it. */
export type Lab = NonNullable<Window['__lab']>;

/** What `lab.run.start` takes: the run's stop conditions, level and setting overrides. */
export type RunOptions = NonNullable<Parameters<Lab['run']['start']>[0]>;

/** Options of `untilLab`, as `page.waitForFunction` takes them. */
export interface UntilOptions {
  timeout?: number;
  polling?: number | 'raf';
}

/** A handle on the page's `window.__lab`; fails when the page was opened without `?debug`. */
export function labHandle(page: Page): Promise<JSHandle<Lab>> {
  return page.evaluateHandle(() => {
    if (!window.__lab) throw new Error('window.__lab is missing: open the page with ?debug');
    return window.__lab;
  });
}

/** Waits until the page (opened with `?debug`) has set `window.__lab`. */
export async function untilLabExposed(page: Page): Promise<void> {
  await page.waitForFunction(() => window.__lab !== undefined);
}

/** Runs `fn` in the page on its `window.__lab` (and `arg`, serialised as `page.evaluate` does). */
export async function onLab<R>(page: Page, fn: (lab: Lab) => R | Promise<R>): Promise<R>;
export async function onLab<R, A>(page: Page, fn: (lab: Lab, arg: A) => R | Promise<R>, arg: A): Promise<R>;
export async function onLab<R>(
  page: Page,
  fn: (lab: Lab, arg: unknown) => R | Promise<R>,
  arg?: unknown,
): Promise<R> {
  const lab = await labHandle(page);
  try {
    return await lab.evaluate(fn, arg);
  } finally {
    await lab.dispose();
  }
}

/** Waits until `predicate`, run in the page on its `window.__lab`, returns a truthy value. */
export async function untilLab(
  page: Page,
  predicate: (lab: Lab) => unknown,
  options?: UntilOptions,
): Promise<void> {
  const lab = await labHandle(page);
  try {
    await page.waitForFunction(predicate, lab, options);
  } finally {
    await lab.dispose();
  }
}

/** `untilLab` with an argument: `predicate` gets `[lab, arg]` (`arg` serialised as `page.evaluate` does). */
export async function untilLabWith<A>(
  page: Page,
  predicate: (labAndArg: [Lab, A]) => unknown,
  arg: A,
  options?: UntilOptions,
): Promise<void>;
export async function untilLabWith(
  page: Page,
  predicate: (labAndArg: [Lab, unknown]) => unknown,
  arg: unknown,
  options?: UntilOptions,
): Promise<void> {
  const lab = await labHandle(page);
  try {
    const input: [JSHandle<Lab>, unknown] = [lab, arg];
    await page.waitForFunction(predicate, input, options);
  } finally {
    await lab.dispose();
  }
}

/** Waits until the page (opened with `?debug`) has its lab and its trainer is ready or failed. */
export async function untilTrainerSettled(page: Page, timeout: number): Promise<void> {
  await page.waitForFunction(() => ['ready', 'error'].includes(window.__lab?.trainer.status ?? ''), null, {
    timeout,
  });
}
