import { describe, expect, it } from 'vitest';
import type { HoldView } from '../pipeline/hold';
import type { CodeRunEvent } from '../run/code-run';
import { HoldState, type HoldRun } from './hold-state.svelte';

/** A code run that records the actions asked of it and tells what the test says. */
function fakeRun() {
  const asked: string[] = [];
  let listener: (e: CodeRunEvent) => void = () => undefined;
  let hold: HoldView | null = null;
  const run: HoldRun = {
    subscribe: (l) => {
      listener = l;
      return () => undefined;
    },
    get hold() {
      return hold;
    },
    pause: () => asked.push('pause') > 0,
    unpause: () => asked.push('unpause') > 0,
    step: () => asked.push('step') > 0,
  };
  const tell = (e: CodeRunEvent) => listener(e);
  const set = (h: HoldView | null) => (hold = h);
  return { run, asked, tell, set };
}

const view = (mode: HoldView['mode'], version: number, target: number | null = null): HoldView => ({
  mode,
  version,
  target,
});

describe('HoldState', () => {
  it('follows the run: its status line says pausing, paused at version N, stepping', () => {
    const f = fakeRun();
    const h = new HoldState(f.run);
    expect([h.view, h.status, h.held]).toEqual([null, '', false]);
    f.set(view('running', 0));
    f.tell({ kind: 'state', phase: 'running' });
    expect([h.view?.mode, h.status]).toEqual(['running', '']);
    f.tell({ kind: 'hold', hold: view('pausing', 3) });
    expect([h.held, h.paused]).toEqual([true, false]);
    expect(h.status).toBe('Pausing… (at version 3, the work in progress finishes)');
    f.tell({ kind: 'hold', hold: view('paused', 4) });
    expect([h.held, h.paused, h.status]).toEqual([true, true, 'Paused at version 4']);
    f.tell({ kind: 'hold', hold: view('stepping', 4, 5) });
    expect([h.held, h.stepping, h.status]).toEqual([false, true, 'Stepping… (to version 5)']);
    // The run stops: nothing to hold.
    f.set(null);
    f.tell({ kind: 'state', phase: 'stopping' });
    expect([h.view, h.paused, h.status]).toEqual([null, false, '']);
  });

  it('passes Pause, Resume and Step on to the run', () => {
    const f = fakeRun();
    const h = new HoldState(f.run);
    expect([h.pause(), h.step(), h.resume()]).toEqual([true, true, true]);
    expect(f.asked).toEqual(['pause', 'step', 'unpause']);
  });
});
