// A real browser (Debian's headless Chromium, driven by playwright-core): a page on another
// origin, allowed by CORS_ORIGINS, logs in, follows its events with EventSource and a stream
// ticket; the GraphQL explorer loads and runs a subscription without one request off the host.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): what is tested is the browser's side
// (CORS, EventSource with a ticket, the explorer and docs page under the CSP), not what is stored.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Browser, chromium, Page } from 'playwright-core';
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const CHROMIUM = '/usr/bin/chromium';

let server: TestServer;
let pages: http.Server;
let pagePort: number;
let browser: Browser;

/** The app page: plain HTML from another origin, whose script uses the API as a frontend would. */
const APP_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>app</title></head><body><script>
window.run = async (api, username, password) => {
  const login = await fetch(api + '/api/v1/auth/login', {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }),
  });
  const tokens = await login.json();
  const auth = { authorization: 'Bearer ' + tokens.access_token };
  const loginLocation = login.headers.get('location');
  const requestId = login.headers.get('x-request-id');
  const ticket = await (await fetch(api + '/api/v1/auth/stream-ticket', { method: 'POST', headers: auth })).json();
  let createdLocation;
  const frame = await new Promise((resolve, reject) => {
    const events = new EventSource(api + '/api/v1/events?ticket=' + encodeURIComponent(ticket.ticket));
    events.addEventListener('voice.created', (e) => { events.close(); resolve({ id: e.lastEventId, data: JSON.parse(e.data) }); });
    events.onopen = async () => {
      const created = await fetch(api + '/api/v1/tts/voices', {
        method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'From the browser', base_voice: 'f1' }),
      });
      createdLocation = created.headers.get('location');
    };
    events.onerror = () => { events.close(); reject(new Error('EventSource failed')); };
  });
  const graphql = await (await fetch(api + '/graphql', {
    method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { username } }' }),
  })).json();
  return { loginLocation, requestId, expiresIn: ticket.expires_in, frame, createdLocation, me: graphql.data.me.username };
};
window.tryFetch = async (url) => { try { await fetch(url); return 'answered'; } catch (e) { return 'refused'; } };
</script></body></html>`;

beforeAll(async () => {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
  pages = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(APP_PAGE));
  await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
  pagePort = (pages.address() as AddressInfo).port;
  // The page is served as http://localhost:<port>: another origin than the API's http://127.0.0.1:<port>.
  server = await startTestServer({ CORS_ORIGINS: `http://localhost:${pagePort}`, GRAPHQL_EXPLORER: 'true' });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => pages?.close(resolve));
  await server?.close();
});

/** A page that records every request it makes and every console error. */
async function recordingPage(): Promise<{ page: Page; requests: string[]; errors: string[] }> {
  const page = await browser.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  return { page, requests, errors };
}

describe('a browser app on an allowed origin', () => {
  it('logs in with fetch, follows its events with EventSource and a ticket, and calls GraphQL', async () => {
    const { page } = await recordingPage();
    await page.goto(`http://localhost:${pagePort}/`);
    const result = await page.evaluate(
      ([url, u, p]) => (globalThis as any).run(url, u, p),
      [server.url, ADMIN.username, ADMIN.password],
    );
    expect(result.loginLocation).toMatch(/^\/api\/v1\/auth\/session\//);
    expect(result.requestId).toMatch(/\S/);
    expect(result.expiresIn).toBe(30);
    expect(result.frame.data).toMatchObject({ type: 'voice.created', name: 'From the browser' });
    expect(result.frame.id).toMatch(/^\d+$/);
    expect(result.createdLocation).toBe(`/api/v1/tts/voices/${result.frame.data.id}`);
    expect(result.me).toBe(ADMIN.username);
    await page.close();
  });

  it('the same page on an origin not in CORS_ORIGINS is refused by the browser', async () => {
    const { page } = await recordingPage();
    await page.goto(`http://127.0.0.1:${pagePort}/`);
    expect(await page.evaluate((url) => (globalThis as any).tryFetch(url), `${server.url}/api/v1/health/live`)).toBe(
      'refused',
    );
    await page.goto(`http://localhost:${pagePort}/`);
    expect(await page.evaluate((url) => (globalThis as any).tryFetch(url), `${server.url}/api/v1/health/live`)).toBe(
      'answered',
    );
    await page.close();
  });
});

describe('the GraphQL explorer', () => {
  it('loads from this host alone and runs the events subscription over /graphql/stream with a pasted token', async () => {
    const admin = await login(server.url, ADMIN);
    const { page, requests, errors } = await recordingPage();
    const query = 'subscription Watch { events(types: ["voice.created"]) { type resourceId data } }';
    const headers = JSON.stringify({ Authorization: `Bearer ${admin.access_token}` });
    const schemaLoaded = page.waitForResponse(
      (r) => r.url() === `${server.url}/graphql` && r.request().method() === 'POST',
    );
    await page.goto(`${server.url}/graphql?query=${encodeURIComponent(query)}&headers=${encodeURIComponent(headers)}`);
    expect((await schemaLoaded).status()).toBe(200);
    const streamOpened = page.waitForResponse((r) => r.url() === `${server.url}/graphql/stream`);
    await page.click('.graphiql-execute-button');
    expect((await streamOpened).status()).toBe(200);
    const created = await api(server.url).post(
      '/api/v1/tts/voices',
      { name: 'Seen in GraphiQL', base_voice: 'f2' },
      { token: admin.access_token },
    );
    await page.waitForFunction(
      (id) => (globalThis as any).document.querySelector('.graphiql-response')?.textContent?.includes(id),
      created.body.id,
      { timeout: 20_000 },
    );
    const shown = await page.textContent('.graphiql-response');
    expect(shown).toContain('Seen in GraphiQL');

    const origin = new URL(server.url).origin;
    const offHost = requests.filter(
      (url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:') && !url.startsWith('blob:'),
    );
    expect(offHost).toEqual([]);
    expect(requests.some((url) => url.includes('/graphql/explorer/graphiql.js'))).toBe(true);
    expect(errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
    await page.close();
  });

  it('the docs page renders from local assets under the CSP', async () => {
    const { page, requests, errors } = await recordingPage();
    await page.goto(`${server.url}/api/v1/docs`);
    await page.waitForSelector('.opblock', { timeout: 20_000 });
    const origin = new URL(server.url).origin;
    expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    expect(errors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
    await page.close();
  });
});
