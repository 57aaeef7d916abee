// The files of test/lib that open no database, as one jest file run once (the sqlite project:
// NO_DATABASE in jest.config.js): each `*.cases.ts` is a describe of its own. docs/testing.md says
// which files belong here.

/* eslint-disable @typescript-eslint/no-require-imports -- a case file registers its tests inside the describe that requires it */
describe('config.cases.ts', () => {
  require('./config.cases');
});
describe('docs-config.cases.ts', () => {
  require('./docs-config.cases');
});
describe('document-cache.cases.ts', () => {
  require('./document-cache.cases');
});
describe('errors.cases.ts', () => {
  require('./errors.cases');
});
describe('expensive-gate.cases.ts', () => {
  require('./expensive-gate.cases');
});
describe('federated-schema.cases.ts', () => {
  require('./federated-schema.cases');
});
describe('fresh-reads.cases.ts', () => {
  require('./fresh-reads.cases');
});
describe('http-server.cases.ts', () => {
  require('./http-server.cases');
});
describe('json-text.cases.ts', () => {
  require('./json-text.cases');
});
describe('mysql-test-url.cases.ts', () => {
  require('./mysql-test-url.cases');
});
describe('operation-budget.cases.ts', () => {
  require('./operation-budget.cases');
});
describe('paging.cases.ts', () => {
  require('./paging.cases');
});
describe('plain-lists.cases.ts', () => {
  require('./plain-lists.cases');
});
describe('poller.cases.ts', () => {
  require('./poller.cases');
});
describe('timed-thread.cases.ts', () => {
  require('./timed-thread.cases');
});
describe('typed-events.cases.ts', () => {
  require('./typed-events.cases');
});
describe('ssrf-guard.cases.ts', () => {
  require('./ssrf-guard.cases');
});
