import { describe, expect, it } from 'vitest';
import {
  emphasis,
  explain,
  GLOSSARY,
  PIPELINE_FIGURE_TERMS,
  RUN_SETTINGS_TERMS,
  type GlossaryTerm,
} from './glossary';

describe('glossary', () => {
  it('has a label and an explanation for every term, emphasis balanced', () => {
    for (const [term, entry] of Object.entries(GLOSSARY)) {
      expect(entry.label, term).not.toBe('');
      expect(entry.explanation.length, term).toBeGreaterThan(10);
      expect(entry.explanation.split('*').length % 2, term).toBe(1);
    }
  });

  it("lists each panel's glossary terms once", () => {
    for (const terms of [RUN_SETTINGS_TERMS, PIPELINE_FIGURE_TERMS]) {
      expect(new Set(terms).size).toBe(terms.length);
      for (const t of terms) expect(Object.hasOwn(GLOSSARY, t)).toBe(true);
    }
  });

  it('fills placeholders and leaves the unknown ones', () => {
    expect(explain('learningRate', { learningRate: '1e-3' })).toMatch(
      /^Adam's step size, 1e-3 at the start\./,
    );
    expect(explain('raceTip', { samples: 640 })).toContain('the same 640 episodes');
    expect(explain('raceTip')).toContain('{samples}');
    const plain: GlossaryTerm = 'replay';
    expect(explain(plain, { samples: 1 })).toBe(GLOSSARY.replay.explanation);
  });

  it('cuts a text into plain and emphasised runs', () => {
    expect(emphasis('a *b c* d')).toEqual([
      { text: 'a ', em: false },
      { text: 'b c', em: true },
      { text: ' d', em: false },
    ]);
    expect(emphasis('*x*')).toEqual([{ text: 'x', em: true }]);
    expect(emphasis('plain')).toEqual([{ text: 'plain', em: false }]);
  });
});
