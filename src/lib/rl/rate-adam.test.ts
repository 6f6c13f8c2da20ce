import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { RateAdam } from './rate-adam';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

/** One Adam step on f(x) = (x − 5)²; returns how far x moved. */
function step(opt: RateAdam, x: tf.Variable): number {
  const before = x.dataSync()[0] ?? NaN;
  opt.minimize(() => x.sub(5).square().sum() as tf.Scalar);
  return (x.dataSync()[0] ?? NaN) - before;
}

describe('RateAdam', () => {
  it('takes the new rate at the next step and keeps its moments and step count', async () => {
    const x = tf.variable(tf.scalar(0));
    const y = tf.variable(tf.scalar(0));
    const changed = new RateAdam(0.1);
    const kept = new RateAdam(0.1);
    step(changed, x);
    step(kept, y);
    changed.rate = 0.01;
    expect(changed.rate).toBe(0.01);
    // Same moments, a tenth of the rate: a tenth of the step.
    const small = step(changed, x);
    const big = step(kept, y);
    expect(small / big).toBeCloseTo(0.1, 6);
    const [iter] = await changed.getWeights();
    expect(iter?.tensor.dataSync()[0]).toBe(2);
    iter?.tensor.dispose();
    expect(() => (changed.rate = 0)).toThrow(/positive number/);
    changed.dispose();
    kept.dispose();
    tf.dispose([x, y]);
  });

  it('steps every variable to the same bits as tfjs’s Adam', () => {
    const init = [tf.tensor2d([0.3, -1.2, 2, 0.01], [2, 2]), tf.tensor1d([0.5, -0.25])];
    const mine = init.map((t) => tf.variable(t.clone()));
    const theirs = init.map((t) => tf.variable(t.clone()));
    const a = new RateAdam(0.05);
    const b = tf.train.adam(0.05, 0.9, 0.999);
    const loss = (vs: tf.Variable[]) => () =>
      tf.addN(
        vs.map((v, i) =>
          v
            .sub(i + 1)
            .square()
            .mul(i + 0.5)
            .sum(),
        ),
      ) as tf.Scalar;
    for (let s = 0; s < 5; s++) {
      a.minimize(loss(mine), false, mine);
      b.minimize(loss(theirs), false, theirs);
    }
    mine.forEach((v, i) => expect(Array.from(v.dataSync())).toEqual(Array.from(theirs[i]?.dataSync() ?? [])));
    a.dispose();
    b.dispose();
    tf.dispose([...init, ...mine, ...theirs]);
  });

  it('keeps moments by variable: a step on a subset leaves the others and their moments alone', async () => {
    const x = tf.variable(tf.scalar(0));
    const y = tf.variable(tf.scalar(0));
    const names = new Map([
      [x.name, 'x'],
      [y.name, 'y'],
    ]);
    const opt = new RateAdam(0.1, names);
    // y only: x gets no moments at all.
    opt.minimize(() => y.sub(5).square() as tf.Scalar, false, [y]);
    expect(opt.withState).toEqual([y.name]);
    expect(x.dataSync()[0]).toBe(0);
    const stored = await opt.getWeights();
    expect(stored.map((w) => w.name)).toEqual(['iter', 'y/m', 'y/v']);
    stored[0]?.tensor.dispose();
    // Then x alone, then both: each keeps its own moments (the list's positions differ each time).
    opt.minimize(() => x.sub(5).square() as tf.Scalar, false, [x]);
    const yBefore = y.dataSync()[0];
    opt.minimize(() => tf.addN([x.sub(5).square(), y.sub(5).square()]) as tf.Scalar, false, [x, y]);
    expect(y.dataSync()[0]).toBeGreaterThan(yBefore ?? 0);
    expect(opt.withState).toEqual([y.name, x.name]);
    opt.dispose();
    tf.dispose([x, y]);
  });

  it('restores moments by their stored names, and older ones by position', async () => {
    const vars = [tf.variable(tf.tensor1d([1, 2])), tf.variable(tf.scalar(3))];
    const names = new Map(vars.map((v, i) => [v.name, `p${i}`]));
    const src = new RateAdam(0.1, names);
    src.minimize(() => vars[1]?.square() as tf.Scalar, false, [vars[1] as tf.Variable]);
    const saved = await src.getWeights(); // iter, p1/m, p1/v
    const copy = new RateAdam(0.1, names);
    await copy.setWeights(saved);
    expect(copy.withState).toEqual([vars[1]?.name]);
    expect(copy.iterations).toBe(1);
    // tfjs's layout (its own variable names): by position over the variables' order.
    const old = new RateAdam(0.1, names);
    await old.setWeights([
      { name: 'iter', tensor: tf.scalar(4, 'int32') },
      { name: '17/m', tensor: tf.zeros([2]) },
      { name: '18/m', tensor: tf.zeros([]) },
      { name: '17/v', tensor: tf.zeros([2]) },
      { name: '18/v', tensor: tf.zeros([]) },
    ]);
    expect(old.withState).toEqual(vars.map((v) => v.name));
    const again = await old.getWeights();
    expect(again.map((w) => w.name)).toEqual(['iter', 'p0/m', 'p1/m', 'p0/v', 'p1/v']);
    for (const o of [src, copy, old]) o.dispose();
    tf.dispose([saved[0]?.tensor, again[0]?.tensor, ...vars].filter((t) => t !== undefined));
  });

  it('counts each tensor’s own steps: one trained late starts as Adam starts, and the counts are stored', async () => {
    const x = tf.variable(tf.scalar(0));
    const y = tf.variable(tf.scalar(0));
    const names = new Map([
      [x.name, 'x'],
      [y.name, 'y'],
    ]);
    const opt = new RateAdam(0.1, names);
    for (let i = 0; i < 20; i++) opt.minimize(() => x.sub(5).square() as tf.Scalar, false, [x]);
    // y's first step: Adam's first step is the rate (sign of the gradient), not ~3 times it.
    opt.minimize(() => y.sub(5).square() as tf.Scalar, false, [y]);
    expect(y.dataSync()[0]).toBeCloseTo(0.1, 5);
    expect([opt.stepsOf(x.name), opt.stepsOf(y.name), opt.iterations]).toEqual([20, 1, 21]);
    const saved = await opt.getWeights();
    expect(saved.map((w) => w.name)).toEqual(['iter', 'x/m', 'y/m', 'x/v', 'y/v', 'steps']);
    const copy = new RateAdam(0.1, names);
    await copy.setWeights(saved);
    expect([copy.stepsOf(x.name), copy.stepsOf(y.name)]).toEqual([20, 1]);
    // Left out: its state goes.
    copy.keepOnly(new Set([x.name]));
    expect(copy.withState).toEqual([x.name]);
    for (const w of saved) if (w.name === 'iter' || w.name === 'steps') w.tensor.dispose();
    for (const o of [opt, copy]) o.dispose();
    tf.dispose([x, y]);
  });
});
