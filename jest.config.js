// Two projects run the same tests: on the embedded SQLite default and on MySQL/MariaDB.
// test/run.js decides which run (MySQL when reachable, and always in CI).
const base = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60_000,
};

module.exports = {
  projects: [
    { ...base, displayName: 'sqlite', setupFiles: ['<rootDir>/test/setup/sqlite.ts'] },
    { ...base, displayName: 'mysql', setupFiles: ['<rootDir>/test/setup/mysql.ts'] },
  ],
};
