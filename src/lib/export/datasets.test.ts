import { parquetMetadata, parquetReadObjects, parquetSchema } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { generateTasks } from '../env/families';
import { generalisationTasks } from '../env/generalisation';
import { tokenId } from '../env/vocab';
import { generateToolUseTasks } from '../env/tooluse';
import { renderChat } from './hf-gpt2';
import { taskRow, tasksJsonl, verlParquet, verlRow } from './datasets';

describe('task rows', () => {
  const tasks = generateTasks(1);
  const held = tasks.find((t) => t.heldOut);
  const trained = tasks.find((t) => !t.heldOut);

  it('writes the observation as the prompt, the chat messages that render it, and the hidden tests as the label', () => {
    const t = {
      ...(trained as NonNullable<typeof trained>),
      examples: [
        { input: 1, output: -3 },
        { input: 2, output: 12 },
      ],
    };
    const row = taskRow(t);
    expect(row.prompt).toBe('<bos> f( 1 )= neg 3 ; f( 2 )= 1 2 <sep>');
    expect(renderChat(row.messages)).toBe(row.prompt);
    expect(JSON.parse(row.label)).toEqual(t.hidden);
    expect(row).toMatchObject({
      split: 'train',
      kind: 'examples',
      family: t.family,
      program: t.program,
      tests: [],
    });
    // Every word of the prompt is a token of the vocabulary.
    for (const w of row.prompt.split(' ')) expect(() => tokenId(w)).not.toThrow();
  });

  it('marks held-out and generalisation tasks, and carries the tool-use kind’s tests', () => {
    expect(taskRow(held as NonNullable<typeof held>).split).toBe('heldout');
    const general = generalisationTasks(tasks)[0];
    expect(general && taskRow(general).split).toBe('generalisation');
    const tool = generateToolUseTasks(1)[0];
    const row = tool && taskRow(tool);
    expect(row?.kind).toBe('tooluse');
    expect(row?.tests.length).toBe(8);
  });

  it('writes one JSON line per task', () => {
    const lines = tasksJsonl(tasks.slice(0, 5)).trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    expect((JSON.parse(lines[2] as string) as { id: string }).id).toBe(tasks[2]?.id);
  });

  it('writes verl rows with one schema: ground truth and tests as JSON strings', () => {
    const tool = generateToolUseTasks(1)[3];
    const row = verlRow(tool as NonNullable<typeof tool>, 3);
    expect(row.data_source).toBe('sandbox-rl-lab/tooluse');
    expect(row.prompt).toEqual([{ role: 'user', content: expect.stringMatching(/^f\( 1 \)= /) }]);
    expect(row.reward_model.style).toBe('rule');
    expect(JSON.parse(row.reward_model.ground_truth)).toEqual(tool?.hidden);
    expect(JSON.parse(row.extra_info.tests)).toEqual(tool?.tests);
    expect(JSON.parse(row.extra_info.examples)).toEqual(tool?.examples);
    expect(row.extra_info.index).toBe(3);
    expect(verlRow({ id: 'mine', level: 'easy', examples: [], hidden: [] }, 0).extra_info.family).toBe('');
  });
});

describe('verlParquet', () => {
  it('writes verl rows that read back as written, nested prompt and structs included', async () => {
    const tasks = [...generateTasks(1).slice(0, 3), ...generateToolUseTasks(1).slice(0, 2)];
    const bytes = verlParquet(tasks);
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    const meta = parquetMetadata(file);
    expect(Number(meta.num_rows)).toBe(5);
    expect(parquetSchema(meta).children.map((c) => c.element.name)).toEqual([
      'data_source',
      'prompt',
      'ability',
      'reward_model',
      'extra_info',
    ]);
    const back = await parquetReadObjects({ file });
    const expected = tasks.map((t, i) => {
      const r = verlRow(t, i);
      return { ...r, extra_info: { ...r.extra_info, index: BigInt(i) } };
    });
    expect(back).toEqual(expected);
  });

  it('refuses to write no tasks', () => {
    expect(() => verlParquet([])).toThrow(/no tasks/);
  });
});
