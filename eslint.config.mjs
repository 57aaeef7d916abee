// ESLint (`npm run lint`, with Prettier's check): typescript-eslint's type-checked recommended
// rules, and no unused variables or imports. Layout is Prettier's business (.prettierrc), not
// ESLint's. A rule that does not fit this codebase is turned off or tuned HERE, with its reason,
// never by scattered eslint-disable comments.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** The rules against `any`, off where code reads JSON whose shape TypeScript does not know (reasons below). */
const UNTYPED_JSON_ALLOWED = {
  '@typescript-eslint/no-explicit-any': 'off',
  '@typescript-eslint/no-unsafe-argument': 'off',
  '@typescript-eslint/no-unsafe-assignment': 'off',
  '@typescript-eslint/no-unsafe-call': 'off',
  '@typescript-eslint/no-unsafe-member-access': 'off',
  '@typescript-eslint/no-unsafe-return': 'off',
};

/** Node's CommonJS globals, for the plain .js files (jest.config.js, test/run.js, scripts/). */
const nodeGlobals = Object.fromEntries(
  [
    'require',
    'module',
    'exports',
    '__dirname',
    '__filename',
    'process',
    'console',
    'Buffer',
    'setTimeout',
    'clearTimeout',
    'URL',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  {
    // Built, generated or installed files.
    ignores: ['dist/', 'coverage/', 'reports/', '.stryker-tmp/', 'data/', 'bench/node_modules/'],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // Unused variables and imports are errors (issue 28: dead imports went unnoticed). A leading
      // underscore marks a parameter kept for its position (Express's error handler needs all 4).
      '@typescript-eslint/no-unused-vars': [
        'error',
        {
          args: 'after-used',
          argsIgnorePattern: '^_',
          varsIgnorePattern: '^_',
          caughtErrors: 'none',
          ignoreRestSiblings: true,
        },
      ],
    },
  },
  {
    // `Function` is how TypeORM (entities, migrations) and type-graphql (orphanedTypes) type the
    // class references the subgraph kit passes through: a narrower type would not fit theirs.
    rules: { '@typescript-eslint/no-unsafe-function-type': 'off' },
  },
  {
    // Tests read parsed JSON answers (test/helpers/http.ts: `body` is `any`) and assert on them
    // with expect(): typing every body would add casts, not checks. The source keeps these rules.
    // The scaffold's test template is such a test, copied into test/<module>/.
    files: ['test/**/*.ts', 'templates/subgraph-test/**/*.ts'],
    rules: {
      ...UNTYPED_JSON_ALLOWED,
    },
  },
  {
    // Test fakes stand in for async interfaces (engines, gateways, pollers) with `async` methods
    // that need no await: `async` says what they replace, and Promise.resolve() would only add noise.
    files: ['test/**/*.ts', 'templates/subgraph-test/**/*.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // Benchmarks, like the tests, read the parsed JSON answers of a running service and use a few
    // fields of them (tokens, ids); typing those answers would add casts, not checks.
    files: ['bench/**/*.ts'],
    rules: {
      ...UNTYPED_JSON_ALLOWED,
    },
  },
  {
    // The REST facade is a JSON-shaping layer: route specs map GraphQL `data` (typed by the
    // schema, not by TypeScript) to REST bodies field by field, and the shapes are pinned by the
    // OpenAPI document's validation and the contract tests. Typing each `present` would add casts,
    // not checks. Its error handling is typed (BodyReadError).
    // A module's route declarations (templates/subgraph/routes.ts, subgraphs/*/routes.ts, the event
    // stream's gateway/events-routes.ts) are facade code too.
    files: ['rest-facade/**/*.ts', 'templates/subgraph/routes.ts', 'subgraphs/*/routes.ts', 'gateway/events-routes.ts'],
    rules: {
      ...UNTYPED_JSON_ALLOWED,
    },
  },
  {
    // The layering (docs/architecture.md): the kit (lib/), the gateway and the REST facade know no
    // module. A module hands them what it contributes through the entry points (bin/), which read
    // the module list (subgraphs/index.ts); the scaffold's templates are copied, never imported.
    files: ['lib/**/*.ts', 'gateway/**/*.ts', 'rest-facade/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)(subgraphs|templates)(/|$)',
              message: 'lib/, gateway/ and rest-facade/ import no module: let the entry point hand it over.',
            },
          ],
        },
      ],
    },
  },
  {
    // Here the rule and tsc disagree on array elements narrowed by a length check: its autofix
    // removed assertions that tsc needs.
    files: ['bench/abuse.ts'],
    rules: { '@typescript-eslint/no-unnecessary-type-assertion': 'off' },
  },
  {
    // Apollo Server's plugin interface types its hooks as returning Promises, and Apollo's own
    // plugins write them as async methods: an `async` hook without await is that interface.
    files: ['gateway/apollo-adapter.ts', 'gateway/http-status.ts'],
    rules: { '@typescript-eslint/require-await': 'off' },
  },
  {
    // espeakThread() is shipped as source text to a worker thread (fn.toString()), so it can import
    // nothing, types included: it loads node:worker_threads with require() and drives the engine's
    // untyped Emscripten module (no type declarations exist for it) through `any`.
    // The audio encoders (subgraphs/tts/audio/encoder*.ts) are shipped the same way, to the engine's
    // threads and the encoder pool's, and drive untyped Emscripten builds (opusscript, libflacjs).
    files: ['subgraphs/tts/engine/espeak.ts', 'subgraphs/tts/audio/encoder*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      ...UNTYPED_JSON_ALLOWED,
    },
  },
  {
    // The Vault's parserThread() is shipped as source text to a worker thread like espeakThread():
    // it requires its libraries by path (untyped there), and imports file-type (an ES module) natively.
    files: ['subgraphs/vault/parser-thread.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      '@typescript-eslint/no-implied-eval': 'off',
      ...UNTYPED_JSON_ALLOWED,
    },
  },
  {
    // A native import() of the engine's ES module: with `module: commonjs` TypeScript turns the
    // keyword into require(), which cannot load it, so these two build it with new Function.
    files: [
      'subgraphs/tts/engine/espeak.ts',
      'subgraphs/tts/audio/encoder-libraries.ts',
      'bench/speech.ts',
      'test/helpers/decode-audio.ts',
    ],
    rules: { '@typescript-eslint/no-implied-eval': 'off' },
  },
  {
    // The decoders' thread, like espeakThread(), is source text: it loads node:worker_threads with require().
    files: ['test/helpers/decode-audio.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Plain JavaScript (configs, test/run.js, scripts/): not in tsconfig.json, so no type
    // information; CommonJS where the file says so.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: nodeGlobals },
  },
  {
    files: ['**/*.js'],
    languageOptions: { sourceType: 'commonjs' },
    // CommonJS files load modules with require(); that is what they are.
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
