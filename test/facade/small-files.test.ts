// Small files of test/facade as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it; each starts the servers it starts on its own). One jest file
// instead of 7 loads the app once per database instead of 7 times. docs/testing.md says which
// files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('browser-headers.cases.ts', () => {
  require('./browser-headers.cases');
});
describe('client-address.cases.ts', () => {
  require('./client-address.cases');
});
describe('conventions.cases.ts', () => {
  require('./conventions.cases');
});
describe('openapi-prism.cases.ts', () => {
  require('./openapi-prism.cases');
});
describe('readiness.cases.ts', () => {
  require('./readiness.cases');
});
describe('response-cap.cases.ts', () => {
  require('./response-cap.cases');
});
describe('client-mistakes.cases.ts', () => {
  require('./client-mistakes.cases');
});
