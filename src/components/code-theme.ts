import { EditorView } from 'codemirror';

/** A dark editor theme matching the page's colours. */
export const pageTheme = EditorView.theme(
  {
    '&': { color: '#dbe4f5', backgroundColor: '#0b1426' },
    '.cm-content': { caretColor: '#dbe4f5' },
    '.cm-gutters': { backgroundColor: '#0b1426', color: '#6b7a99', border: 'none' },
    '.cm-activeLine, .cm-activeLineGutter': { backgroundColor: '#13203b' },
    '&.cm-focused .cm-selectionBackground, .cm-selectionBackground': { backgroundColor: '#2a3d66' },
  },
  { dark: true },
);
