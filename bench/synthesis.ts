// Issue 6's figures, on the one-process server: characters synthesised per second by one
// worker, and queued → succeeded for 100 one-sentence jobs requested at once (server times,
// and the client's view: from sending the POST to receiving its synthesis.succeeded frame).
import { subscribe, percentile } from './events';
import { benchEnv, postJson, printTable, startBenchServer } from './harness';

const PARAGRAPH =
  'Speech synthesis turns written text into sound. This paragraph is read aloud by the benchmark, again and again, ' +
  'so that the worker has a steady amount of text to render, with ordinary words, punctuation and numbers like 42 and 1999. ';
const SENTENCE = 'The quick brown fox jumps over the lazy dog.';
const THROUGHPUT_JOBS = Number(process.env.BENCH_SYNTHESIS_JOBS ?? 20);
const LATENCY_JOBS = Number(process.env.BENCH_SYNTHESIS_BURST ?? 100);

interface Finished {
  characters: number;
  duration_ms: number;
  created_at: string;
  started_at: string;
  finished_at: string;
}

async function get(url: string, token: string): Promise<any> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return res.json();
}

/** Requests every text at once; resolves when each has its frame, with the jobs as read back. */
async function burst(url: string, token: string, texts: string[]) {
  const stream = await subscribe(url, token, 'synthesis.succeeded,synthesis.failed');
  try {
    const sent = new Map<string, number>();
    const started = performance.now();
    await Promise.all(
      texts.map(async (text) => {
        const at = performance.now();
        const res = await postJson(`${url}/api/v1/tts/syntheses`, { text, base_voice: 'f3' }, token);
        if (res.status !== 202) throw new Error(`POST answered ${res.status}: ${JSON.stringify(res.body)}`);
        sent.set(res.body.id, at);
      }),
    );
    while ([...sent.keys()].some((id) => !stream.arrivals.has(id))) await new Promise((r) => setTimeout(r, 20));
    const wallMs = Math.max(...stream.arrivals.values()) - started;
    const jobs: (Finished & { state: string; observedMs: number })[] = await Promise.all(
      [...sent].map(async ([id, at]) => ({
        ...(await get(`${url}/api/v1/tts/syntheses/${id}`, token)),
        observedMs: stream.arrivals.get(id)! - at,
      })),
    );
    const failed = jobs.filter((j) => j.state !== 'succeeded').length;
    if (failed) throw new Error(`${failed} syntheses failed`);
    return { jobs, wallMs };
  } finally {
    stream.close();
  }
}

const ms = (from: string, to: string) => Date.parse(to) - Date.parse(from);

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  const rows: Record<string, string | number>[] = [];
  for (const db of dbs) {
    for (const concurrency of [1, 2]) {
      const server = await startBenchServer(benchEnv(db, { SYNTHESIS_CONCURRENCY: String(concurrency) }));
      try {
        const token = (
          await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' })
        ).body.access_token;
        await burst(
          server.url,
          token,
          Array.from({ length: concurrency }, () => SENTENCE),
        ); // loads the engine threads

        // Throughput: long texts back to back; characters over the time the workers were busy.
        // Meanwhile a request now and then shows whether rendering holds up the event loop.
        const read = async () => {
          const at = performance.now();
          await fetch(`${server.url}/api/v1/auth/session`, { headers: { authorization: `Bearer ${token}` } }).then(
            (r) => r.arrayBuffer(),
          );
          return performance.now() - at;
        };
        const idleReads: number[] = [];
        for (let i = 0; i < 200; i++) idleReads.push(await read());
        idleReads.sort((a, b) => a - b);
        let rendering = true;
        const reads: number[] = [];
        const reader = (async () => {
          while (rendering) {
            reads.push(await read());
            await new Promise((r) => setTimeout(r, 10));
          }
        })();
        const long = await burst(
          server.url,
          token,
          Array.from({ length: THROUGHPUT_JOBS }, () => PARAGRAPH.repeat(4)),
        );
        rendering = false;
        await reader;
        reads.sort((a, b) => a - b);
        const chars = long.jobs.reduce((sum, j) => sum + j.characters, 0);
        const busyMs =
          Math.max(...long.jobs.map((j) => Date.parse(j.finished_at))) -
          Math.min(...long.jobs.map((j) => Date.parse(j.started_at)));
        const audioMs = long.jobs.reduce((sum, j) => sum + j.duration_ms, 0);

        // Latency: many short jobs requested at once.
        const short = await burst(
          server.url,
          token,
          Array.from({ length: LATENCY_JOBS }, () => SENTENCE),
        );
        const queuedToDone = short.jobs.map((j) => ms(j.created_at, j.finished_at)).sort((a, b) => a - b);
        const observed = short.jobs.map((j) => j.observedMs).sort((a, b) => a - b);
        rows.push({
          database: db,
          workers: concurrency,
          'chars/s': Math.round((chars / busyMs) * 1000),
          'audio s per s': (audioMs / busyMs).toFixed(1),
          'read p99 ms idle / rendering': `${Math.round(percentile(idleReads, 99))} / ${Math.round(percentile(reads, 99))}`,
          [`${LATENCY_JOBS} jobs: p50 ms`]: percentile(queuedToDone, 50),
          'p99 ms': percentile(queuedToDone, 99),
          'p99 seen by client ms': Math.round(percentile(observed, 99)),
          'all done ms': Math.round(short.wallMs),
          'RSS MiB': Math.round(server.rssMiB()),
        });
      } finally {
        await server.stop();
      }
    }
  }
  printTable(
    `Speech synthesis, one process (throughput: ${THROUGHPUT_JOBS} texts of ${PARAGRAPH.length * 4} characters; latency: queued → succeeded of ${LATENCY_JOBS} one-sentence jobs sent at once)`,
    rows,
  );
}
