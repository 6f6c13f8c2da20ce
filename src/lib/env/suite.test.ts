import { describe, expect, it } from 'vitest';
import { parseSuite } from './suite';

const good = {
  name: 'mine',
  tasks: [{ id: 'a', level: 'easy', examples: [{ input: 1, output: 3 }], hidden: [{ input: 2, output: 5 }] }],
};
const withTask = (patch: Record<string, unknown>) =>
  JSON.stringify({ ...good, tasks: [{ ...good.tasks[0], ...patch }] });

describe('parseSuite', () => {
  it('reads a valid suite', () => {
    const r = parseSuite(JSON.stringify(good));
    expect(r).toEqual({ ok: true, suite: good });
  });

  it.each([
    ['invalid JSON', '{"name": "x", ', '$', /not valid JSON/],
    ['not an object', '[1]', '$', /must be an object/],
    ['missing name', JSON.stringify({ tasks: good.tasks }), '$.name', /missing field "name"/],
    ['empty task list', JSON.stringify({ name: 'x', tasks: [] }), '$.tasks', /must not be empty/],
    ['missing id', withTask({ id: undefined }), '$.tasks[0].id', /missing field "id"/],
    ['reserved id', withTask({ id: 'hindsight:1,2' }), '$.tasks[0].id', /reserved for relabelled tasks/],
    [
      'mistyped level',
      withTask({ level: 'expert' }),
      '$.tasks[0].level',
      /must be one of easy, medium, hard/,
    ],
    [
      'mistyped output',
      withTask({ hidden: [{ input: 1, output: '3' }] }),
      '$.tasks[0].hidden[0].output',
      /must be a number, got string/,
    ],
    [
      'non-finite number',
      withTask({ examples: [{ input: 424242, output: 1 }] }).replace('424242', '1e999'),
      '$.tasks[0].examples[0].input',
      /finite/,
    ],
    ['empty tests', withTask({ hidden: [] }), '$.tasks[0].hidden', /must not be empty/],
  ])('rejects %s, naming the path', (_name, text, path, message) => {
    const r = parseSuite(text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.path).toBe(path);
    expect(r.message).toMatch(message);
  });

  it('rejects duplicate ids at the second one', () => {
    const r = parseSuite(JSON.stringify({ name: 'x', tasks: [good.tasks[0], good.tasks[0]] }));
    expect(r).toEqual({ ok: false, path: '$.tasks[1].id', message: 'duplicate task id "a"' });
  });
});
