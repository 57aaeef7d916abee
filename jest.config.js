// Two projects run the same tests: on the embedded SQLite default and on MySQL/MariaDB.
// test/run.js decides which run (MySQL when reachable, and always in CI).
const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }] },
};

module.exports = {
  // A global option: jest ignores it inside a project.
  testTimeout: 60_000,
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
    { ...base, displayName: 'sqlite', setupFiles: ['<rootDir>/test/setup/sqlite.ts'] },
    { ...base, displayName: 'mysql', setupFiles: ['<rootDir>/test/setup/mysql.ts'] },
  ],
};
