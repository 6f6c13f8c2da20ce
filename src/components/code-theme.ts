import { HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { EditorView } from 'codemirror';

/** A dark editor theme matching the page's colours. */
export const pageTheme = EditorView.theme(
  {
    '&': { color: '#dbe4f5', backgroundColor: '#0b1426' },
    '.cm-content': { caretColor: '#dbe4f5' },
    '.cm-gutters': { backgroundColor: '#0b1426', color: '#8b9bb8', border: 'none' },
    '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: '#13203b' },
    '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: '#2a3d66' },
  },
  { dark: true },
);

/**
 * Token colours for the dark background. basicSetup's default style is made for a light page
 * (definitions in #00f, keywords in #708: hard to read on #0b1426, worse on a projector); it is
 * only a fallback, so this style replaces it. Every colour keeps a contrast of at least 4.5:1
 * against the editor's background (WCAG AA for text).
 */
export const pageHighlight = syntaxHighlighting(
  HighlightStyle.define([
    { tag: [t.keyword, t.controlKeyword, t.operatorKeyword, t.moduleKeyword], color: '#c792ea' },
    { tag: [t.definition(t.variableName), t.function(t.variableName)], color: '#82aaff' },
    { tag: [t.propertyName, t.definition(t.propertyName)], color: '#89ddff' },
    { tag: [t.string, t.special(t.string)], color: '#c3e88d' },
    { tag: [t.number, t.bool, t.null, t.atom], color: '#f9a27b' },
    { tag: [t.comment, t.lineComment, t.blockComment], color: '#8b9bb8', fontStyle: 'italic' },
    { tag: t.invalid, color: '#ff8a8a' },
  ]),
);
