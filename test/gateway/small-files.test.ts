// Small files of test/gateway as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it; each starts the servers it starts on its own). One jest file
// instead of 3 loads the app once per database instead of 3 times. docs/testing.md says which
// files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('http-status.cases.ts', () => {
  require('./http-status.cases');
});
describe('one-schema.cases.ts', () => {
  require('./one-schema.cases');
});
describe('direct-execution.cases.ts', () => {
  require('./direct-execution.cases');
});
