// The Vault's figures (issue 32), on the one-process server: capture throughput (202s per second),
// enrichment of a 200 KB article from a local web server (pages per second, server CPU per
// page), classification time per item with a model trained on 10,000 items, and listing and
// search p95 with 100,000 items in one user's vault.
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../lib/config';
import { openDatabase } from '../lib/database/open';
import { vaultSubgraph } from '../subgraphs/vault';
import { classify, documentWords, Predictor, trainModel } from '../subgraphs/vault/classifier';
import { VaultItem, VaultItemKind, VaultItemState } from '../subgraphs/vault/entities/vault-item';
import { excerptOf } from '../subgraphs/vault/item-rows';
import { percentile } from './events';
import { benchEnv, cpuMs, load, postJson, printTable, removeBenchData, startBenchServer } from './harness';

const ITEMS = Number(process.env.BENCH_VAULT_ITEMS ?? 100_000);
const PAGES = Number(process.env.BENCH_VAULT_PAGES ?? 40);
const TRAINED = 10_000;

/** 5,000 made-up words, drawn with a Zipf-like skew (few common, most rare), and some real ones in one item of ten. */
const WORDS = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}${'aeiou'[i % 5]}n`);
const COMMON = 'river valley mountain orbit planet comet garden orchard recipe butter flour market shares bonds'.split(
  ' ',
);
const rnd = (n: number) => Math.floor(Math.random() * n);
const word = () => (rnd(10) ? WORDS[Math.floor(WORDS.length * Math.random() ** 3)] : COMMON[rnd(COMMON.length)]);
const sentence = (k = 12) => Array.from({ length: k }, word).join(' ');

/** A ~200 KB article: head, navigation, many paragraphs, footer. */
const ARTICLE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Bench article</title>
<meta property="og:title" content="A long article"><meta name="description" content="Two hundred kilobytes of prose."></head>
<body><nav>${'<a href="/x">navigation</a> '.repeat(50)}</nav><article><h1>A long article</h1>
${Array.from({ length: 1300 }, () => `<p>${sentence(20)}.</p>`).join('\n')}</article><footer>footer</footer></body></html>`;

async function login(url: string): Promise<string> {
  return (await postJson(`${url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' })).body
    .access_token;
}

async function getJson(url: string, token: string): Promise<any> {
  return (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json();
}

async function timed(url: string, token: string, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const at = performance.now();
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    times.push(performance.now() - at);
  }
  return times.sort((a, b) => a - b);
}

async function captureAndEnrich(db: 'sqlite' | 'mysql', rows: Record<string, string | number>[], script = 'server.js') {
  const build = script === 'server.js' ? db : `${db} (base)`;
  const web = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(ARTICLE);
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
  const server = await startBenchServer(
    benchEnv(db, {
      VAULT_FETCH_ALLOW_HOSTS: '127.0.0.1',
      VAULT_PENDING_PER_USER: '100000',
      VAULT_ITEMS_PER_USER: '10000000',
    }),
    { script },
  );
  try {
    const token = await login(server.url);
    const capture = await load('capture a text', {
      url: `${server.url}/api/v1/vault/items`,
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: `${sentence(40)}. ${sentence(40)}.` }),
      connections: 10,
      duration: 8,
    });
    rows.push({
      db: build,
      figure: 'capture (POST /vault/items, text), 202/s',
      value: capture.rps,
      'p99 ms': capture.p99,
      non2xx: capture.non2xx,
    });
    // Let the captured texts' enrichment finish before timing pages.
    const pending = async () =>
      (await getJson(`${server.url}/api/v1/vault/items?state=pending&limit=1`, token)).items.length as number;
    while (await pending()) await new Promise((r) => setTimeout(r, 200));

    const cpuBefore = cpuMs(server.pid);
    const start = performance.now();
    for (let i = 0; i < PAGES; i++) {
      const res = await postJson(`${server.url}/api/v1/vault/items`, { url: `${base}/article?i=${i}` }, token);
      if (res.status !== 202) throw new Error(`capture answered ${res.status}`);
    }
    while (await pending()) await new Promise((r) => setTimeout(r, 50));
    const seconds = (performance.now() - start) / 1000;
    const cpu = cpuMs(server.pid) - cpuBefore;
    const failed = (await getJson(`${server.url}/api/v1/vault/items?state=failed&limit=100`, token)).items
      .length as number;
    rows.push({
      db: build,
      figure: `enrichment of a ${Math.round(ARTICLE.length / 1024)} KB article, pages/s (2 workers)`,
      value: (PAGES / seconds).toFixed(1),
      'p99 ms': '',
      non2xx: failed,
    });
    rows.push({
      db: build,
      figure: 'server CPU per page (fetch, parse thread, classify), ms',
      value: (cpu / PAGES).toFixed(0),
      'p99 ms': '',
      non2xx: '',
    });
  } finally {
    await server.stop();
    web.close();
  }
}

function classification(rows: Record<string, string | number>[]) {
  const categories = ['cooking', 'finance', 'travel', 'science', 'poetry'];
  const start = performance.now();
  let model = null as ReturnType<typeof trainModel> | null;
  // Trained as the worker trains: batches of 200.
  for (let done = 0; done < TRAINED; done += 200) {
    model = trainModel(
      model,
      Array.from({ length: 200 }, (_, i) => {
        const category = categories[(done + i) % categories.length];
        return {
          words: documentWords({
            title: category,
            text: `${category} ${sentence(60)}`,
            description: null,
            url: null,
            language: 'en',
          }),
          learn: category,
          unlearn: null,
        };
      }),
    );
  }
  const trainMs = performance.now() - start;
  const loadStart = performance.now();
  const predictor = new Predictor(model!, 5);
  const loadMs = performance.now() - loadStart;
  const times: number[] = [];
  for (let i = 0; i < 500; i++) {
    const item = {
      id: uuidv7(),
      title: 'An item',
      text: `${sentence(300)}`,
      description: null,
      url: 'https://example.com/x',
      language: 'en',
      tags: [],
      classifiedBy: null,
      category: null,
      favorite: false,
      archived: false,
      kind: VaultItemKind.TEXT,
      mediaType: null,
    } as unknown as VaultItem;
    const at = performance.now();
    classify(item, [], predictor, { minConfidence: 0.6, keywordTags: 5 });
    times.push(performance.now() - at);
  }
  times.sort((a, b) => a - b);
  rows.push({
    db: '-',
    figure: `classification per item (model of ${TRAINED} items: rules, Bayes, keywords), p50 / p95 ms`,
    value: `${percentile(times, 50).toFixed(2)} / ${percentile(times, 95).toFixed(2)}`,
    'p99 ms': percentile(times, 99).toFixed(2),
    non2xx: '',
  });
  rows.push({
    db: '-',
    figure: `training ${TRAINED} items (batches of 200), s; model size, MiB; model load, ms`,
    value: `${(trainMs / 1000).toFixed(1)}; ${(model!.model.length / 1024 / 1024).toFixed(1)}; ${loadMs.toFixed(0)}`,
    'p99 ms': '',
    non2xx: '',
  });
}

async function listing(db: 'sqlite' | 'mysql', rows: Record<string, string | number>[]) {
  const env = benchEnv(db, { VAULT_ENRICH_CONCURRENCY: '0', EXPENSIVE_PER_USER: '1000' });
  // Migrated by a first start; filled directly (100,000 captures through the API would take minutes).
  let server = await startBenchServer(env, { ownsData: false });
  const token = await login(server.url);
  const me = (await getJson(`${server.url}/api/v1/auth/session`, token)).user_id as string;
  await server.stop();
  const config = loadConfig(env);
  const vault = await openDatabase(
    { ...config, MIGRATIONS_RUN: false },
    { name: 'vault', entities: vaultSubgraph.entities, migrations: [] },
  );
  const fillStart = performance.now();
  const now = Date.now();
  for (let done = 0; done < ITEMS; done += 1000) {
    const batch = Array.from({ length: 1000 }, (_, i) => {
      const text = `${sentence(80)}${done + i === 4242 ? ' zeppelin' : ''}`;
      return vault.manager.create(VaultItem, {
        id: uuidv7({ msecs: now - ITEMS + done + i }),
        ownerId: me,
        kind: VaultItemKind.TEXT,
        url: null,
        urlKey: null,
        title: sentence(5),
        text,
        excerpt: excerptOf(text),
        description: null,
        language: 'en',
        siteName: null,
        mediaType: null,
        sizeBytes: null,
        sha256: null,
        fileName: null,
        blobKey: null,
        state: VaultItemState.READY,
        error: null,
        category: ['a', 'b', 'c'][rnd(3)],
        tags: [],
        classifiedBy: null,
        classifiedRuleId: null,
        classifiedConfidence: null,
        favorite: !rnd(10),
        archived: false,
        version: 1,
        capturedAt: new Date(),
        updatedAt: new Date(),
        attempts: 0,
        workerId: null,
        leaseUntil: null,
        trainPending: false,
        trainedCategory: null,
        sourceHubId: null,
        sourceNodeId: null,
      });
    });
    await vault.transaction((m) => m.insert(VaultItem, batch));
  }
  const fillS = (performance.now() - fillStart) / 1000;
  await vault.destroy();
  server = await startBenchServer(env);
  try {
    const t = await login(server.url);
    const base = `${server.url}/api/v1/vault/items`;
    for (const [name, query] of [
      ['first page (20)', '?limit=20'],
      ['a deep page (cursor from page 1 → 2)', '?limit=100&category=b'],
      ['filter favorite', '?limit=20&favorite=true'],
      ['search one common word', '?limit=20&q=orchard'],
      ['search two words', '?limit=20&q=river%20orchard'],
      ['search a rare word', '?limit=20&q=zeppelin'],
    ] as const) {
      await timed(`${base}${query}`, t, 2);
      const times = await timed(`${base}${query}`, t, Number(process.env.BENCH_VAULT_READS ?? 20));
      rows.push({
        db,
        figure: `${name} at ${ITEMS} items, p50 / p95 ms`,
        value: `${percentile(times, 50).toFixed(1)} / ${percentile(times, 95).toFixed(1)}`,
        'p99 ms': percentile(times, 99).toFixed(1),
        non2xx: '',
      });
    }
    rows.push({
      db,
      figure: `filling ${ITEMS} items (direct inserts, FTS kept), s`,
      value: fillS.toFixed(0),
      'p99 ms': '',
      non2xx: '',
    });
  } finally {
    await server.stop();
    await removeBenchData(env).catch(() => undefined);
  }
}

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  // BENCH_VAULT_PARTS=classify,enrich,listing (default all): only those figures.
  const parts = new Set((process.env.BENCH_VAULT_PARTS ?? 'classify,enrich,listing').split(','));
  const rows: Record<string, string | number>[] = [];
  if (parts.has('classify')) classification(rows);
  for (const db of dbs) {
    if (parts.has('enrich')) {
      // BENCH_BASE=<another checkout's dist/bench>: that build's enrichment first, then this one's, twice.
      const base = process.env.BENCH_BASE;
      const builds = base
        ? [path.relative(__dirname, path.join(path.resolve(base), 'server.js')), 'server.js']
        : ['server.js'];
      for (let round = 0; round < (base ? 2 : 1); round++)
        for (const script of builds) await captureAndEnrich(db, rows, script);
    }
    if (parts.has('listing')) await listing(db, rows);
  }
  printTable('vault', rows);
}
