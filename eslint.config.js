import path from 'node:path';
import js from '@eslint/js';
import ts from 'typescript-eslint';
import svelte from 'eslint-plugin-svelte';
import globals from 'globals';
import svelteConfig from './svelte.config.js';

/**
 * The folders of `src/lib/` and the workers by layer, lowest first (DESIGN §11.1): a folder
 * imports only folders of lower layers; folders of one layer do not import each other.
 * `src/lib/*.ts` are the helpers at the root of `src/lib/`.
 */
const LAYERS = [
  ['src/lib/*.ts'],
  ['sandbox/'],
  ['env/'],
  ['policy/'],
  ['rl/'],
  ['config/'],
  ['pipeline/'],
  ['stats/', 'rollout/', 'custom/', 'storage/', 'export/'],
  ['workers/'],
  ['bridge/'],
  ['run/'],
  ['view/'],
  ['ui/'],
];

/** The folders of the layers below `folder`'s. */
const below = (folder) => {
  const layer = LAYERS.findIndex((l) => l.includes(folder));
  return LAYERS.slice(0, layer).flat();
};

/** Folder → the folders it may import besides its own (the table of DESIGN §11.1). */
const MAY_IMPORT = {
  ...Object.fromEntries(LAYERS.flat().map((folder) => [folder, below(folder)])),
  // Components reach the run layer through ui/ only.
  'components/': ['src/lib/*.ts', 'env/', 'config/', 'view/', 'ui/'],
  'App.svelte': ['src/lib/*.ts', 'env/', 'config/', 'view/', 'ui/', 'components/'],
  'src/*.ts': ['App.svelte', 'ui/'],
  'e2e/bench/': [...below('view/'), 'e2e/'],
  'e2e/': [...below('ui/'), 'src/*.ts'],
};

/**
 * Where each folder lies: `dir` its directory, `files` (and `ignores`) its files for a config
 * block; `target`, where it is not the whole of `dir`, the path an import reaches and how the
 * specifier ends.
 */
const PLACES = {
  'src/lib/*.ts': { dir: 'src/lib', files: ['src/lib/*.ts'], target: { path: 'src/lib', end: '/[^/]+$' } },
  ...Object.fromEntries(
    LAYERS.flat()
      .filter((f) => f.endsWith('/') && f !== 'workers/')
      .map((f) => [f, { dir: `src/lib/${f.slice(0, -1)}`, files: [`src/lib/${f}**/*.{ts,svelte}`] }]),
  ),
  'workers/': { dir: 'workers', files: ['workers/**/*.ts'] },
  'components/': { dir: 'src/components', files: ['src/components/**/*.{ts,svelte}'] },
  'App.svelte': { dir: 'src', files: ['src/App.svelte'], target: { path: 'src/App.svelte', end: '$' } },
  'src/*.ts': { dir: 'src', files: ['src/*.ts'], target: { path: 'src', end: '/(?!App\\.svelte$)[^/]+$' } },
  'e2e/bench/': { dir: 'e2e/bench', files: ['e2e/bench/**/*.ts'] },
  'e2e/': { dir: 'e2e', files: ['e2e/**/*.ts'], ignores: ['e2e/bench/**'] },
};

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A regex of the relative specifiers by which a file in `fromDir` or a folder below it reaches
 * `to`, followed by `end`.
 */
function reaching(fromDir, { path: to, end }) {
  const rel = path.posix.relative(fromDir, to);
  const start =
    rel === ''
      ? '^\\.'
      : rel.startsWith('..')
        ? `^(\\.\\./)*${escape(rel)}`
        : `^(\\./|(\\.\\./)+)${escape(rel)}`;
  return start + end;
}

/** The `no-restricted-imports` patterns of `folder`: every folder not in its row, and Svelte below ui/. */
function forbidden(folder) {
  const { dir } = PLACES[folder];
  const allowed = new Set([folder, ...MAY_IMPORT[folder]]);
  const patterns = Object.entries(PLACES)
    .filter(([name]) => !allowed.has(name))
    .map(([name, place]) => {
      const target = place.target ?? { path: place.dir, end: '(/|$)' };
      return {
        regex: reaching(dir, target),
        message: `${folder} may not import ${name}: see the import directions in DESIGN §11.1.`,
        caseSensitive: true,
      };
    });
  if (!['ui/', 'components/', 'App.svelte', 'src/*.ts'].includes(folder))
    patterns.push({
      regex: '^svelte(/|$)|\\.svelte$',
      message: `${folder} is below the UI: only ui/ and the components import Svelte (DESIGN §11.1).`,
    });
  return patterns;
}

export default ts.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      'test-results/',
      'playwright-report/',
      'bench-results/',
      '.venv-cluster/',
    ],
  },
  js.configs.recommended,
  ...ts.configs.strict,
  ...svelte.configs.recommended,
  {
    languageOptions: { globals: { ...globals.browser, ...globals.node } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.svelte', '**/*.svelte.ts'],
    languageOptions: {
      parserOptions: {
        projectService: true,
        extraFileExtensions: ['.svelte'],
        parser: ts.parser,
        svelteConfig,
      },
    },
  },
  // One block per folder: the import directions of DESIGN §11.1.
  ...Object.keys(MAY_IMPORT).map((folder) => ({
    files: PLACES[folder].files,
    ignores: PLACES[folder].ignores ?? [],
    rules: { 'no-restricted-imports': ['error', { patterns: forbidden(folder) }] },
  })),
);
