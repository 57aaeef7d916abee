// The files of test/tts that open no database, as one jest file run once (the sqlite project:
// NO_DATABASE in jest.config.js): each `*.cases.ts` is a describe of its own. docs/testing.md says
// which files belong here.

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('blend-variant.cases.ts', () => {
  require('./blend-variant.cases');
});
describe('mp3-info.cases.ts', () => {
  require('./mp3-info.cases');
});
describe('resample.cases.ts', () => {
  require('./resample.cases');
});
describe('speech-engine-formats.cases.ts', () => {
  require('./speech-engine-formats.cases');
});
describe('webvtt.cases.ts', () => {
  require('./webvtt.cases');
});
