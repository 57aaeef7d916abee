// A database outage under load, on a MariaDB of its own (never the shared one): the distributed
// layout (auth and tts subgraph processes, a synthesis worker, a gateway, a facade) creates
// voices and reads sessions while the database is stopped and started again. Used by
// test/ops/outage.test.ts (which asserts) and by `npm run bench -- ops` (which prints).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { startPrivateMariadb } from './mariadb';
import { startDistributed, ServiceProcess } from '../test/helpers/processes';

export interface OutageRequest {
  phase: 'before' | 'during' | 'after';
  route: string;
  status: number;
  error?: string;
  ms: number;
}

export interface OutageResult {
  requests: OutageRequest[];
  /** The readiness statuses each process answered while the database was down. */
  readyWhileDown: Record<string, number[]>;
  /** Per process: milliseconds from the database answering again to its first 2xx. */
  recoveryMs: Record<string, number>;
  /** Voices whose create was acknowledged (202), and how many of them read back 200 afterwards. */
  acknowledged: string[];
  readBack: number;
  /** Acknowledged voices without a voice.created event in the log, and events logged more than once. */
  lostEvents: number;
  duplicatedEvents: number;
  /** Rows left in the subgraphs' outboxes once relayed. */
  outboxLeft: number;
  /** The event stream opened before the outage delivered a voice created after it. */
  streamResumed: boolean;
  exitCodes: Record<string, number | null>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await sleep(100);
  }
  return false;
}

async function timed(
  route: string,
  phase: () => OutageRequest['phase'],
  send: () => Promise<Response>,
): Promise<OutageRequest & { body?: any }> {
  const started = Date.now();
  const at = phase();
  try {
    const res = await send();
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { phase: at, route, status: res.status, error: body?.error, ms: Date.now() - started, body };
  } catch (err) {
    return { phase: at, route, status: 0, error: String((err as Error).message), ms: Date.now() - started };
  }
}

/** Reads `text/event-stream` frames, collecting the `data.id` of voice.created events. */
function watchVoiceEvents(url: string, token: string, seen: Set<string>): AbortController {
  const abort = new AbortController();
  void (async () => {
    try {
      const res = await fetch(url, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      const decoder = new TextDecoder();
      let buffered = '';
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffered += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const frame = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          if (!/^event: voice\.created$/m.test(frame)) continue;
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (data) seen.add(JSON.parse(data).id);
        }
      }
    } catch {
      /* aborted, or the stream ended */
    }
  })();
  return abort;
}

export async function runOutage(options: { outageMs: number; log?: (line: string) => void }): Promise<OutageResult> {
  const log = options.log ?? (() => undefined);
  const db = await startPrivateMariadb();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fav-outage-'));
  const prefix = 'outage';
  const env = {
    DATABASE_URL: `${db.url}/${prefix}`,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    AUTH_BOOTSTRAP_USERNAME: 'admin',
    AUTH_BOOTSTRAP_PASSWORD: 'correct horse battery',
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '1000000',
    SYNTHESIS_HEARTBEAT_SECONDS: '1',
  };
  let layout: Awaited<ReturnType<typeof startDistributed>> | undefined;
  try {
    layout = await startDistributed(env, { gateways: 1, facades: 1, workers: 1 });
    const [facade] = layout.facades;
    const processes: ServiceProcess[] = layout.all;
    log(`layout up: ${processes.map((p) => p.name).join(', ')}`);
    const login = (await (
      await fetch(`${facade.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: 'correct horse battery' }),
      })
    ).json()) as { access_token: string };
    const token = login.access_token;
    const auth = { authorization: `Bearer ${token}` };
    const streamed = new Set<string>();
    const stream = watchVoiceEvents(`${facade.url}/api/v1/events`, token, streamed);

    let phase: OutageRequest['phase'] = 'before';
    const requests: OutageRequest[] = [];
    const acknowledged: string[] = [];
    let stop = false;
    let n = 0;
    const creates = async () => {
      while (!stop) {
        const r = await timed(
          'POST /api/v1/tts/voices',
          () => phase,
          () =>
            fetch(`${facade.url}/api/v1/tts/voices`, {
              method: 'POST',
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify({ name: `outage ${n++}`, base_voice: 'f3' }),
            }),
        );
        requests.push(r);
        if (r.status === 202) acknowledged.push(r.body.id);
        if (r.status !== 202) await sleep(20); // no busy loop while it is down
      }
    };
    const reads = async () => {
      while (!stop) {
        const r = await timed(
          'GET /api/v1/auth/session',
          () => phase,
          () => fetch(`${facade.url}/api/v1/auth/session`, { headers: auth }),
        );
        requests.push(r);
        if (r.status !== 200) await sleep(20);
      }
    };
    const load = [creates(), creates(), reads(), reads()];
    await sleep(1500);

    log('stopping the database');
    phase = 'during'; // from the stop signal on: mariadbd takes a moment to shut down
    await db.stop();
    const readyWhileDown: Record<string, number[]> = Object.fromEntries(processes.map((p) => [p.name, []]));
    const outageEnds = Date.now() + options.outageMs;
    while (Date.now() < outageEnds) {
      await Promise.all(
        processes.map(async (p) => {
          const r = await timed(
            'GET /health/ready',
            () => phase,
            () => fetch(`${p.url}/health/ready`, { signal: AbortSignal.timeout(5000) }),
          );
          readyWhileDown[p.name].push(r.status);
        }),
      );
      await sleep(250);
    }

    log('starting the database again');
    await db.start();
    const back = Date.now();
    phase = 'after';
    // First 2xx of each process: the facade and the gateway on a request that needs the
    // database, the subgraphs and the worker on readiness (which pings theirs).
    const recoveryMs: Record<string, number> = {};
    await Promise.all(
      processes.map(async (p) => {
        const probe = p.name.startsWith('facade')
          ? () => fetch(`${p.url}/api/v1/auth/session`, { headers: auth })
          : p.name.startsWith('gateway')
            ? () =>
                fetch(`${p.url}/graphql`, {
                  method: 'POST',
                  headers: { ...auth, 'content-type': 'application/json' },
                  body: JSON.stringify({ query: '{ voices(first: 1) { items { id } } }' }),
                })
            : () => fetch(`${p.url}/health/ready`);
        const ok = await until(async () => {
          const res = await probe().catch(() => undefined);
          if (!res) return false;
          const body = await res.json().catch(() => ({}));
          return res.ok && !(body as { errors?: unknown }).errors;
        }, 60_000);
        if (ok) recoveryMs[p.name] = Date.now() - back;
      }),
    );
    log(`recovered: ${JSON.stringify(recoveryMs)}`);

    // A voice made now must reach the stream opened before the outage.
    const after = (await (
      await fetch(`${facade.url}/api/v1/tts/voices`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'after the outage', base_voice: 'm1' }),
      })
    ).json()) as { id?: string };
    if (after.id) acknowledged.push(after.id);
    await sleep(1000);
    stop = true;
    await Promise.all(load);
    const streamResumed = !!after.id && (await until(() => Promise.resolve(streamed.has(after.id!)), 20_000));
    stream.abort();

    let readBack = 0;
    for (const id of acknowledged)
      if ((await fetch(`${facade.url}/api/v1/tts/voices/${id}`, { headers: auth })).status === 200) readBack++;

    // The log, read straight from the database: every acknowledged voice once.
    const conn = await mysql.createConnection({ host: '127.0.0.1', port: db.port, user: 'root' });
    let counts = new Map<string, number>();
    let outboxLeft = 0;
    try {
      const read = async () => {
        const [rows] = await conn.query(
          `SELECT resource_id AS id, COUNT(*) AS n FROM \`${prefix}_events\`.events WHERE type = 'voice.created' GROUP BY resource_id`,
        );
        counts = new Map((rows as { id: string; n: number }[]).map((r) => [r.id, Number(r.n)]));
        const [[tts], [authRows]] = await Promise.all([
          conn.query(`SELECT COUNT(*) AS n FROM \`${prefix}_tts\`.outbox`),
          conn.query(`SELECT COUNT(*) AS n FROM \`${prefix}_auth\`.outbox`),
        ]);
        outboxLeft = Number((tts as { n: number }[])[0].n) + Number((authRows as { n: number }[])[0].n);
        return outboxLeft === 0 && acknowledged.every((id) => counts.has(id));
      };
      await until(read, 30_000);
    } finally {
      await conn.end();
    }
    const lostEvents = acknowledged.filter((id) => !counts.has(id)).length;
    const duplicatedEvents = [...counts.values()].filter((c) => c > 1).length;

    await layout.stop();
    const exitCodes = Object.fromEntries(
      await Promise.all(processes.map(async (p) => [p.name, await p.exited] as const)),
    );
    layout = undefined;
    return {
      requests,
      readyWhileDown,
      recoveryMs,
      acknowledged,
      readBack,
      lostEvents,
      duplicatedEvents,
      outboxLeft,
      streamResumed,
      exitCodes,
    };
  } finally {
    await layout?.stop();
    await db.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
