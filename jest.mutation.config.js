// `npm run test:mutation` (Stryker): the test files of the modules whose rules are mutated,
// on SQLite only, so that one run fits in about 20 minutes on a small machine.
const { projects, ...shared } = require('./jest.config');

module.exports = {
  ...shared,
  ...projects.find((p) => p.displayName === 'sqlite'),
  testMatch: [
    '<rootDir>/test/tts/voices.test.ts',
    '<rootDir>/test/tts/small-files.test.ts', // voice-service.cases.ts
    // voice updates (VoiceService.update: 53 mutants had no test in chunk 1 without it)
    // (small-files.test.ts: voice-update.cases.ts)
    '<rootDir>/test/tts/synthesis-worker.test.ts',
    '<rootDir>/test/auth/small-files.test.ts', // login.cases.ts, tokens.cases.ts, login-throttle.cases.ts
    '<rootDir>/test/auth/rate-limit.test.ts',
    // unlock (LoginThrottle.unlock: no test in chunk 1 without it)
    '<rootDir>/test/auth/admin-users.test.ts',
    // TokenVerifier's cache of verified tokens (expiry, bound, messages)
    '<rootDir>/test/auth/token-cache.test.ts',
    // LoginThrottle itself: refusal, unlock on both stores, the memory store's 10,000 bound
    // (small-files.test.ts: login-throttle.cases.ts)
    '<rootDir>/test/events/small-files.test.ts', // event-stream.cases.ts
    '<rootDir>/test/events/stream.test.ts',
    '<rootDir>/test/facade/small-files.test.ts', // conventions.cases.ts
    '<rootDir>/test/lib/no-database.test.ts', // config.cases.ts, errors.cases.ts
    // the error table: statuses, default messages, AppError's extensions
    // (no-database.test.ts: errors.cases.ts)
  ],
};
