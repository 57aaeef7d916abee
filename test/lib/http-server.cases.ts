// lib/http-server.ts: an Express app's requests and responses are made with the app's own
// prototypes, so that Express never has to swap them (a swap makes V8 read them slowly).
import http from 'node:http';
import express from 'express';
import { listen } from '../../lib/http-server';

it("serves an Express app with requests and responses that already have the app's prototypes", async () => {
  // `handle`: what Express runs for each request (not in its type definitions).
  type Handle = (req: object, res: object, next: () => void) => void;
  const app = express() as express.Express & { handle: Handle };
  const seen: boolean[] = [];
  // What the objects are when they reach the app, before Express would swap their prototypes.
  const handle = app.handle.bind(app);
  app.handle = (req, res, next) => {
    seen.push(Object.getPrototypeOf(req) === app.request, Object.getPrototypeOf(res) === app.response);
    handle(req, res, next);
  };
  app.get('/', (req, res) => res.json({ path: req.path, ip: typeof req.ip }));
  const server = await listen(app, 0, '127.0.0.1');
  try {
    const res = await fetch(`${server.url}/?a=1`);
    expect(await res.json()).toEqual({ path: '/', ip: 'string' }); // Express's request and response methods work
    expect(seen).toEqual([true, true]);
  } finally {
    await server.close();
  }
});

it('serves a plain handler with plain requests and responses', async () => {
  const server = await listen(
    (req, res) => res.end(String(Object.getPrototypeOf(req) === http.IncomingMessage.prototype)),
    0,
    '127.0.0.1',
  );
  try {
    expect(await (await fetch(server.url)).text()).toBe('true');
  } finally {
    await server.close();
  }
});
