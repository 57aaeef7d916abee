// Issue 45's import figures: one user imports a Netscape file of BENCH_IMPORT_BOOKMARKS bookmarks
// (default 50,000, ~8 MiB) through POST /api/v1/imports while another user lists her notes one
// request at a time. Reported per database: the upload's time, the import's time to `succeeded`,
// its records per second and the server's CPU per record, the server's peak RSS (sampled every
// 200 ms; target < 300 MiB) and the other user's p50/p95 idle and during the import (target: within
// 2× the idle p95). Enrichment is off (VAULT_ENRICH_CONCURRENCY=0: no link is fetched) so that the
// figures are the import's own; the vault's waiting limit is raised so that it does not pause it.
// BENCH_DB=sqlite|mysql picks one database (default: both); BENCH_SECONDS of the idle phase (default 8).
import mysql from 'mysql2/promise';
import { benchEnv, cpuMs, MYSQL_URL, postJson, printTable, startBenchServer } from './harness';

const STATEMENT_COUNTERS = ['Questions', 'Com_select', 'Com_insert', 'Com_update', 'Com_delete', 'Com_commit'];

/** MySQL's server-wide statement counters (every client's: run nothing else beside the bench). */
async function statementCounters(): Promise<Record<string, number>> {
  const connection = await mysql.createConnection(MYSQL_URL);
  try {
    const [rows] = await connection.query('SHOW GLOBAL STATUS WHERE Variable_name IN (?)', [STATEMENT_COUNTERS]);
    return Object.fromEntries(
      (rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, Number(r.Value)]),
    );
  } finally {
    await connection.end();
  }
}

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const BOOKMARKS = Number(process.env.BENCH_IMPORT_BOOKMARKS ?? 50_000);
/** The longest the import may take before the scenario gives up. */
const TIMEOUT_MS = Number(process.env.BENCH_IMPORT_TIMEOUT_SECONDS ?? 3600) * 1000;

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? Math.round(s[Math.min(s.length - 1, Math.floor(s.length * q))] * 10) / 10 : NaN;
};

/** A Netscape file of `n` distinct links in folders of 500, with tags, as a browser writes it. */
export function bookmarkFile(n: number): Buffer {
  const parts = [
    '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">\n',
    '<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks</H1>\n<DL><p>\n',
  ];
  for (let i = 0; i < n; i++) {
    if (i % 500 === 0) {
      if (i) parts.push('    </DL><p>\n');
      parts.push(`    <DT><H3 ADD_DATE="1700000000">Folder ${i / 500}</H3>\n    <DL><p>\n`);
    }
    parts.push(
      `        <DT><A HREF="https://bench-${i % 997}.example.org/articles/${i}?ref=bookmark" ADD_DATE="${1700000000 + i}" TAGS="bench,t${i % 50}">Article number ${i} about something worth keeping</A>\n`,
    );
  }
  parts.push('    </DL><p>\n</DL><p>\n');
  return Buffer.from(parts.join(''));
}

async function timed(url: string, token: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - t0 };
}

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  const file = bookmarkFile(BOOKMARKS);
  const rows: Record<string, string | number>[] = [];
  const statements: Record<string, string | number>[] = [];
  for (const db of dbs) {
    const server = await startBenchServer(
      benchEnv(db, {
        VAULT_ITEMS_PER_USER: String(BOOKMARKS * 2),
        VAULT_PENDING_PER_USER: String(BOOKMARKS * 2),
        VAULT_ENRICH_CONCURRENCY: '0',
      }),
    );
    let peakRss = server.rssMiB();
    const sampler = setInterval(() => {
      try {
        peakRss = Math.max(peakRss, server.rssMiB());
      } catch {
        // the server is gone
      }
    }, 200);
    try {
      const base = server.url;
      const importer: string = (
        await postJson(`${base}/api/v1/auth/login`, { username: 'bench', password: 'bench password' })
      ).body.access_token;
      const made = await postJson(
        `${base}/graphql`,
        { query: 'mutation { createUser(username: "other", password: "other bench password") { id } }' },
        importer,
      );
      if (made.body.errors) throw new Error(`createUser: ${JSON.stringify(made.body.errors)}`);
      const other: string = (
        await postJson(`${base}/api/v1/auth/login`, { username: 'other', password: 'other bench password' })
      ).body.access_token;
      const mine = await postJson(`${base}/api/v1/notes`, { title: 'mine', body: 'my only note' }, other);
      if (mine.status !== 202) throw new Error(`other's note: ${mine.status}`);

      const idle: number[] = [];
      const idleCounters = db === 'mysql' ? await statementCounters() : undefined;
      const idleStarted = performance.now();
      for (const deadline = performance.now() + SECONDS * 1000; performance.now() < deadline;)
        idle.push((await timed(`${base}/api/v1/notes`, other)).ms);
      // Statements a second beside the import: the other user's reads and every process's pollers.
      const idleRate = idleCounters
        ? ((await statementCounters()).Questions - idleCounters.Questions) / ((performance.now() - idleStarted) / 1000)
        : 0;
      const counters0 = db === 'mysql' ? await statementCounters() : undefined;

      const rssBefore = server.rssMiB();
      peakRss = rssBefore;
      const cpu0 = cpuMs(server.pid);
      const t0 = performance.now();
      const res = await fetch(`${base}/api/v1/imports?format=netscape`, {
        method: 'POST',
        headers: { authorization: `Bearer ${importer}`, 'content-type': 'text/html' },
        body: file,
      });
      const started = (await res.json()) as { id: string };
      if (res.status !== 202) throw new Error(`import: ${res.status} ${JSON.stringify(started)}`);
      const uploadMs = performance.now() - t0;

      const during: number[] = [];
      let failed = 0;
      let job: { state: string; progress: { done: number }; counts: Record<string, number> } | undefined;
      const deadline = t0 + TIMEOUT_MS;
      await Promise.all([
        (async () => {
          while (!job && performance.now() < deadline) {
            const r = await timed(`${base}/api/v1/notes`, other);
            during.push(r.ms);
            if (r.status !== 200) failed++;
          }
        })(),
        (async () => {
          while (performance.now() < deadline) {
            const r = await fetch(`${base}/api/v1/imports/${started.id}`, {
              headers: { authorization: `Bearer ${importer}` },
            });
            const body = (await r.json()) as NonNullable<typeof job>;
            if (['succeeded', 'failed', 'canceled'].includes(body.state)) {
              job = body;
              return;
            }
            await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        })(),
      ]);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = (cpuMs(server.pid) - cpu0) / 1000;
      if (counters0 && job) {
        const after = await statementCounters();
        const records = Math.max(1, job.progress.done);
        statements.push({
          bookmarks: BOOKMARKS,
          ...Object.fromEntries(
            STATEMENT_COUNTERS.map((name) => [
              `${name} / record`,
              Math.round(((after[name] - counters0[name]) / records) * 10) / 10,
            ]),
          ),
          'Questions / s beside (idle phase)': Math.round(idleRate),
        });
      }
      rows.push({
        database: db,
        bookmarks: BOOKMARKS,
        'file MiB': Math.round((file.length / 1024 / 1024) * 10) / 10,
        'upload s': Math.round(uploadMs / 100) / 10,
        'import s (to finished)': Math.round(seconds * 10) / 10,
        state: job ? `${job.state} (${job.counts.vault_items} items, ${job.counts.duplicates} dup)` : 'timed out',
        'records / s': job ? Math.round(job.progress.done / seconds) : 0,
        'server CPU ms / record': job ? Math.round((cpu * 1000 * 100) / Math.max(1, job.progress.done)) / 100 : 0,
        'RSS MiB before / peak during': `${Math.round(rssBefore)} / ${Math.round(peakRss)}`,
        'other p50 / p95 idle ms': `${quantile(idle, 0.5)} / ${quantile(idle, 0.95)}`,
        'other p50 / p95 during ms': `${quantile(during, 0.5)} / ${quantile(during, 0.95)}`,
        'other p95 ratio': Math.round((quantile(during, 0.95) / quantile(idle, 0.95)) * 10) / 10,
        'other failures': failed,
      });
    } finally {
      clearInterval(sampler);
      await server.stop();
    }
  }
  printTable(
    `Import: one user imports ${BOOKMARKS} bookmarks (Netscape), another lists her notes; RSS target < 300 MiB, other's p95 within 2× idle`,
    rows,
  );
  if (statements.length)
    printTable(
      "MySQL statements per imported record (server-wide counters over the import: the other user's reads and the pollers included)",
      statements,
    );
}
