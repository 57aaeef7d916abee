// The small files of test/auth as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it), and those on the default settings share one server
// (sharedTestServer). One jest file instead of eight loads the app once instead of eight times
// per database, and starts two servers fewer. docs/testing.md says which files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('graphql.cases.ts', () => {
  require('./graphql.cases');
});
describe('login.cases.ts', () => {
  require('./login.cases');
});
describe('tokens.cases.ts', () => {
  require('./tokens.cases');
});
describe('login-throttle.cases.ts', () => {
  require('./login-throttle.cases');
});
describe('password-race.cases.ts', () => {
  require('./password-race.cases');
});
describe('roles-migration.cases.ts', () => {
  require('./roles-migration.cases');
});
describe('session-quota.cases.ts', () => {
  require('./session-quota.cases');
});
describe('unicode-username.cases.ts', () => {
  require('./unicode-username.cases');
});
