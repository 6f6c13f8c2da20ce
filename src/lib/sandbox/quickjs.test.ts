import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runContract } from './contract';
import { CONTRACT } from './corpus';
import type { QuickJSSandbox } from './quickjs';
import { createNodeQuickJS } from './quickjs-node';

let sandbox: QuickJSSandbox;

beforeAll(async () => {
  sandbox = await createNodeQuickJS();
});
afterAll(() => sandbox.dispose());

describe('QuickJS sandbox contract (node)', () => {
  it.each(CONTRACT.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const [outcome] = await runContract(sandbox, [c]);
    expect(outcome?.problem).toBeNull();
  });

  it('stops an infinite loop close to its deadline', async () => {
    const r = await sandbox.run({
      code: 'const f = () => { for (;;) {} }',
      inputs: [0],
      limits: { deadlineMs: 30 },
    });
    expect(r.error?.kind).toBe('timeout');
    expect(r.ms).toBeLessThan(30 + 100);
  });

  it('rejects a bad request without running it', async () => {
    const r = await sandbox.run({ code: 'const f = (x) => x', inputs: [0], limits: { deadlineMs: -1 } });
    expect(r.error).toEqual({
      kind: 'internal',
      message: expect.stringMatching(/deadlineMs must be a positive number/),
    });
  });
});
