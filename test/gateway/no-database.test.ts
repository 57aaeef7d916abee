// The files of test/gateway that open no database, as one jest file run once (the sqlite project:
// NO_DATABASE in jest.config.js): each `*.cases.ts` is a describe of its own. docs/testing.md says
// which files belong here.

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('apollo-adapter.cases.ts', () => {
  require('./apollo-adapter.cases');
});
describe('compose.cases.ts', () => {
  require('./compose.cases');
});
describe('module-list.cases.ts', () => {
  require('./module-list.cases');
});
describe('scopes-declared.cases.ts', () => {
  require('./scopes-declared.cases');
});
