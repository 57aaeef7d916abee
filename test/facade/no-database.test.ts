// The files of test/facade that open no database, as one jest file run once (the sqlite project:
// NO_DATABASE in jest.config.js): each `*.cases.ts` is a describe of its own. docs/testing.md says
// which files belong here.

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('shutdown.cases.ts', () => {
  require('./shutdown.cases');
});
describe('slow-stream.cases.ts', () => {
  require('./slow-stream.cases');
});
describe('start-page.cases.ts', () => {
  require('./start-page.cases');
});
