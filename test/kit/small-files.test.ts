// Small files of test/kit as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it; each starts the servers it starts on its own). One jest file
// instead of 2 loads the app once per database instead of 2 times. docs/testing.md says which
// files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('caps-cascade.cases.ts', () => {
  require('./caps-cascade.cases');
});
describe('caps.cases.ts', () => {
  require('./caps.cases');
});
describe('expensive-reads.cases.ts', () => {
  require('./expensive-reads.cases');
});
