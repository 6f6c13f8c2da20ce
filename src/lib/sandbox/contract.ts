import { CONTRACT, NORMAL, type ContractCase } from './corpus';
import type { Sandbox, SandboxResult } from './types';

/** What one contract case did: the case, its result, and the normal run right after it. */
export interface ContractOutcome {
  name: string;
  expected: ContractCase['expect'];
  got: string;
  /** Why the case failed the contract, or null when it held. */
  problem: string | null;
}

function check(c: ContractCase, r: SandboxResult): string | null {
  const got = r.ok ? 'ok' : (r.error?.kind ?? 'missing error');
  if (got !== c.expect) return `expected ${c.expect}, got ${got}${r.error ? ` (${r.error.message})` : ''}`;
  if (c.outputs && JSON.stringify(r.outputs) !== JSON.stringify(c.outputs)) {
    return `expected outputs ${JSON.stringify(c.outputs)}, got ${JSON.stringify(r.outputs)}`;
  }
  if (c.message !== undefined && r.error?.message !== c.message)
    return `expected the message ${JSON.stringify(c.message)}, got ${JSON.stringify(r.error?.message)}`;
  if (c.stdout !== undefined && r.stdout !== c.stdout)
    return `expected stdout ${JSON.stringify(c.stdout)}, got ${JSON.stringify(r.stdout)}`;
  if (!Number.isFinite(r.ms) || r.ms < 0) return `bad ms ${r.ms}`;
  return null;
}

/**
 * Runs every contract case, each followed by a normal program that must still succeed, against
 * any `Sandbox`: QuickJS in node, QuickJS in a browser worker, WebContainer when it boots.
 */
export async function runContract(
  sandbox: Sandbox,
  cases: ContractCase[] = CONTRACT,
): Promise<ContractOutcome[]> {
  const outcomes: ContractOutcome[] = [];
  for (const c of cases) {
    const r = await sandbox.run(c.request);
    const after = await sandbox.run(NORMAL.request);
    const afterProblem = check(NORMAL, after);
    outcomes.push({
      name: c.name,
      expected: c.expect,
      got: r.ok ? 'ok' : (r.error?.kind ?? '?'),
      problem: check(c, r) ?? (afterProblem ? `the normal run after it failed: ${afterProblem}` : null),
    });
  }
  return outcomes;
}
