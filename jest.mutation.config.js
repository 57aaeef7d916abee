// `npm run test:mutation` (Stryker): the test files of the modules whose rules are mutated,
// on SQLite only, so that one run fits in about 20 minutes on a small machine.
const { projects, ...shared } = require('./jest.config');

module.exports = {
  ...shared,
  ...projects.find((p) => p.displayName === 'sqlite'),
  testMatch: [
    '<rootDir>/test/tts/voices.test.ts',
    '<rootDir>/test/tts/voice-service.test.ts',
    // voice updates (VoiceService.update: 53 mutants had no test in chunk 1 without it)
    '<rootDir>/test/tts/voice-update.test.ts',
    '<rootDir>/test/tts/synthesis-worker.test.ts',
    '<rootDir>/test/auth/login.test.ts',
    '<rootDir>/test/auth/rate-limit.test.ts',
    // unlock (LoginThrottle.unlock: no test in chunk 1 without it)
    '<rootDir>/test/auth/admin-users.test.ts',
    '<rootDir>/test/auth/tokens.test.ts',
    // TokenVerifier's cache of verified tokens (expiry, bound, messages)
    '<rootDir>/test/auth/token-cache.test.ts',
    // LoginThrottle itself: refusal, unlock on both stores, the memory store's 10,000 bound
    '<rootDir>/test/auth/login-throttle.test.ts',
    '<rootDir>/test/events/event-stream.test.ts',
    '<rootDir>/test/events/stream.test.ts',
    '<rootDir>/test/facade/conventions.test.ts',
    '<rootDir>/test/lib/config.test.ts',
    // the error table: statuses, default messages, AppError's extensions
    '<rootDir>/test/lib/errors.test.ts',
  ],
};
