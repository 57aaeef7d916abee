// Small files of test/tts as one jest file: each `*.cases.ts` is a describe of its own (its
// beforeAll and afterAll scoped to it; each starts the servers it starts on its own). One jest file
// instead of 7 loads the app once per database instead of 7 times. docs/testing.md says which
// files belong here.
import { closeSharedServers } from '../helpers/server';

afterAll(() => closeSharedServers());

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('audio-budget.cases.ts', () => {
  require('./audio-budget.cases');
});
describe('speed.cases.ts', () => {
  require('./speed.cases');
});
describe('synthesis-settings.cases.ts', () => {
  require('./synthesis-settings.cases');
});
describe('user-cascade.cases.ts', () => {
  require('./user-cascade.cases');
});
describe('voice-update.cases.ts', () => {
  require('./voice-update.cases');
});
describe('synthesis-list.cases.ts', () => {
  require('./synthesis-list.cases');
});
describe('voice-service.cases.ts', () => {
  require('./voice-service.cases');
});
