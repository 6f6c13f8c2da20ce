import { describe, expect, it } from 'vitest';
import { DEFAULT_ENV_CONFIG, TOOLUSE_ENV_CONFIG } from './config';
import { generateTasks } from './families';
import { generalisationTasks } from './generalisation';
import { builtInTasks, envConfigOf, generalisationOf } from './task-kinds';
import { generateToolUseTasks, toolUseGeneralisationTasks } from './tooluse';

describe('task kinds', () => {
  it('give each kind its built-in tasks, generalisation tasks and environment', () => {
    expect(builtInTasks('examples', 3)).toEqual(generateTasks(3));
    expect(builtInTasks('tooluse', 3)).toEqual(generateToolUseTasks(3));
    expect(generalisationOf(generateTasks(1))).toEqual(generalisationTasks(generateTasks(1)));
    expect(generalisationOf(generateToolUseTasks(1))).toEqual(
      toolUseGeneralisationTasks(generateToolUseTasks(1)),
    );
    expect(envConfigOf('examples')).toBe(DEFAULT_ENV_CONFIG);
    expect(envConfigOf('tooluse')).toBe(TOOLUSE_ENV_CONFIG);
  });

  it('split a mixed list by kind', () => {
    const both = generalisationOf([...generateTasks(1), ...generateToolUseTasks(1)]);
    expect(both).toHaveLength(
      generalisationTasks(generateTasks(1)).length +
        toolUseGeneralisationTasks(generateToolUseTasks(1)).length,
    );
    expect(both.some((t) => t.kind === 'tooluse')).toBe(true);
    expect(both.some((t) => t.kind === undefined)).toBe(true);
  });
});
