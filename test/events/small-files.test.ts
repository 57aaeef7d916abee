// Small files of test/events as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it; each starts the servers it starts on its own). One jest file
// instead of 5 loads the app once per database instead of 5 times. docs/testing.md says which
// files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('stream-ticket.cases.ts', () => {
  require('./stream-ticket.cases');
});
describe('wake-on-commit.cases.ts', () => {
  require('./wake-on-commit.cases');
});
describe('scope-changes.cases.ts', () => {
  require('./scope-changes.cases');
});
describe('revocations.cases.ts', () => {
  require('./revocations.cases');
});
describe('event-stream.cases.ts', () => {
  require('./event-stream.cases');
});
