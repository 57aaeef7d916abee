// Two projects run the same tests: on the embedded SQLite default and on MySQL/MariaDB.
// test/run.js decides which run (MySQL when reachable, and always in CI).

/**
 * Test files that open no database (pure functions, documents, engines, stand-alone HTTP servers
 * with no subgraph behind them): a second run on MySQL would test nothing new, so they run once,
 * in the sqlite project. A file that starts a server or opens a database (startTestServer,
 * isolatedEnv, openDatabase) does not belong here: it runs on both.
 */
const NO_DATABASE = [
  'auth/token-cache',
  'events/slow-graphql-stream',
  'facade/no-database',
  'facade/openapi-lint',
  'gateway/new-subgraph',
  'gateway/no-database',
  'lib/no-database',
  'ops/built-start',
  'transfer/no-database',
  'tts/no-database',
  'vault/url-glob',
];
/**
 * Test files that start processes which open a database only because every process does, and
 * test what no database changes (OpenTelemetry's environment variables, the HTTP edges of each
 * kind of process, the operation pipeline's refusals, the OpenAPI document, a browser's CORS): they run once, in the sqlite project. Each says why at its top. A file that
 * checks anything the database answers, stores or logs runs on both.
 */
const DATABASE_INCIDENTAL = [
  'browser/browser',
  'e2e/subgraph-process',
  'e2e/unknown-requests',
  'facade/openapi',
  'gateway/pipeline',
  'observability/otel-env',
];
/** Test files whose every test is about MySQL (distributed layouts on a shared server, its outage): not run on SQLite. */
const MYSQL_ONLY = ['e2e/distributed', 'e2e/synthesis-worker', 'e2e/tracing', 'gateway/hive-gateway', 'ops/outage'];
const files = (names) => names.map((name) => `<rootDir>/test/${name}\\.test\\.ts$`);

/**
 * Packages published only as ES modules. Node (20.19+) loads them with require(), jest's module
 * loader does not: jest turns them into CommonJS as it loads them (ts-jest, allowJs).
 */
const ESM_ONLY = ['stream-json', 'stream-chain'];

const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
    [`/node_modules/(${ESM_ONLY.join('|')})/.+\\.js$`]: [
      'ts-jest',
      { tsconfig: { allowJs: true, module: 'commonjs', target: 'ES2022', isolatedModules: true } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  // Process-wide watchers a file's modules started, stopped after it (test/setup/per-file.ts).
  setupFilesAfterEnv: ['<rootDir>/test/setup/per-file.ts'],
};

module.exports = {
  // A global option: jest ignores it inside a project.
  testTimeout: 60_000,
  // Once per run: the test servers' key pair (test/setup/global-setup.js).
  globalSetup: '<rootDir>/test/setup/global-setup.js',
  globalTeardown: '<rootDir>/test/setup/global-teardown.js',
  // Two test files at a time (jest's default is one per core minus one: a single worker on
  // 2 cores). Most of a test's time is spent waiting (the database, spawned processes, the
  // event relay's polls): one file's wait is another's CPU, and the sqlite and mysql projects
  // run side by side. `npm test -- --maxWorkers=N` overrides it.
  maxWorkers: 2,
  // Test files run in a worker process that is replaced once it holds more than this after a
  // file: with one worker (2 cores) jest would otherwise run every file in its own process,
  // and what ~90 files leave behind (servers' modules, buffers) outgrew its heap.
  workerIdleMemoryLimit: '1GB',
  projects: [
    {
      ...base,
      displayName: 'sqlite',
      setupFiles: ['<rootDir>/test/setup/sqlite.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...files(MYSQL_ONLY)],
    },
    {
      ...base,
      displayName: 'mysql',
      setupFiles: ['<rootDir>/test/setup/mysql.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...files(NO_DATABASE), ...files(DATABASE_INCIDENTAL)],
    },
  ],
};
