// Mutation testing (`npm run test:mutation`, not part of `npm test`): mutates the modules that
// hold the rules and checks that the tests notice. Where only part of a file holds the rule,
// the range is found by the method's name, so that it follows the code when lines move.
import fs from 'node:fs';

/** `file:start-end` of a method: from the line that declares it to the closing brace at its indentation. */
function method(file, declaration) {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.trimStart().startsWith(declaration));
  if (start < 0) throw new Error(`stryker.config.mjs: "${declaration}" is not in ${file}`);
  const indent = lines[start].match(/^\s*/)[0];
  const end = lines.findIndex((l, i) => i > start && l === `${indent}}`);
  return `${file}:${start + 1}-${end + 1}`;
}

export default {
  packageManager: 'npm',
  testRunner: 'jest',
  jest: { projectType: 'custom', configFile: 'jest.mutation.config.js', enableFindRelatedTests: false },
  checkers: ['typescript'],
  tsconfigFile: 'tsconfig.json',
  coverageAnalysis: 'perTest',
  // Static mutants (module-level code: the config schema's table, the error code table) cannot be
  // traced to a test, so each one runs every test file (~45 s here): 290 of them would take hours.
  // They are left out of the score by default; STRYKER_STATIC=1 includes them.
  ignoreStatic: process.env.STRYKER_STATIC !== '1',
  mutate: [
    'subgraphs/tts/voice-service.ts',
    'subgraphs/auth/login-throttle.ts',
    method('lib/tokens.ts', 'export class TokenVerifier'),
    method('subgraphs/tts/synthesis-worker.ts', 'async claimNext('),
    method('subgraphs/tts/synthesis-worker.ts', 'private finish('),
    method('subgraphs/tts/synthesis-worker.ts', 'private giveUp('),
    method('lib/event-log.ts', 'async append('),
    method('lib/event-stream.ts', 'async checkResumable('),
    method('lib/event-stream.ts', 'subscribe('),
    method('lib/event-stream.ts', 'private async *deliver('),
    'rest-facade/errors.ts',
    'lib/errors.ts',
    'lib/config.ts',
  ],
  // A shared 2-core machine: one or two jest processes, each test with a generous timeout.
  concurrency: Number(process.env.STRYKER_CONCURRENCY ?? 2),
  // The first run of every test file, in one process, on a busy machine.
  dryRunTimeoutMinutes: 30,
  timeoutMS: 30_000,
  timeoutFactor: 2,
  reporters: ['clear-text', 'progress-append-only', 'html', 'json'],
  htmlReporter: { fileName: 'reports/mutation/index.html' },
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  ignorePatterns: ['dist', 'data', 'coverage', 'reports'],
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
