// Issue 12's figure: one user queues BENCH_FAIR_JOBS (40) long syntheses at once, then another
// user queues one short one. Reported: how many of the first user's were accepted (the per-user
// cap), and how long the second user's job waited (queued → started, queued → succeeded), with
// one worker. Afterwards the first user's jobs are canceled (DELETE), which ends the run quickly.
import { benchEnv, postJson, printTable, startBenchServer } from './harness';

const JOBS = Number(process.env.BENCH_FAIR_JOBS ?? 40);
const CHARS = Number(process.env.BENCH_FAIR_CHARS ?? 10_000);
const PROSE = 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest. ';

const get = async (url: string, token: string) =>
  (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<any>;

export async function run(): Promise<void> {
  const dbs = (process.env.BENCH_DB ? [process.env.BENCH_DB] : ['sqlite', 'mysql']) as ('sqlite' | 'mysql')[];
  const rows: Record<string, string | number>[] = [];
  for (const db of dbs) {
    const server = await startBenchServer(benchEnv(db, { SYNTHESIS_CONCURRENCY: '1' }));
    try {
      const admin = (
        await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' })
      ).body.access_token;
      const made = await fetch(`${server.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
        body: JSON.stringify({
          query: 'mutation { createUser(username: "second", password: "second user password") { id } }',
        }),
      });
      if (!made.ok) throw new Error(`createUser: ${made.status}`);
      const second = (
        await postJson(`${server.url}/api/v1/auth/login`, { username: 'second', password: 'second user password' })
      ).body.access_token;

      // Loads the engine thread first, so that the wait measured is the queue's, not the engine's start.
      const warm = await postJson(
        `${server.url}/api/v1/tts/syntheses`,
        { text: 'Warming up.', base_voice: 'f3' },
        second,
      );
      for (;;) {
        const state = (await get(`${server.url}/api/v1/tts/syntheses/${warm.body.id}`, second)).state;
        if (state === 'succeeded' || state === 'failed') break;
        await new Promise((r) => setTimeout(r, 50));
      }

      const text = PROSE.repeat(Math.ceil(CHARS / PROSE.length)).slice(0, CHARS);
      const started = performance.now();
      const answers = await Promise.all(
        Array.from({ length: JOBS }, () =>
          postJson(`${server.url}/api/v1/tts/syntheses`, { text, base_voice: 'f3' }, admin),
        ),
      );
      const accepted = answers.filter((a) => a.status === 202).map((a) => a.body.id as string);
      const refused = answers.filter((a) => a.status === 429).length;
      const requestMs = performance.now() - started;

      const short = await postJson(
        `${server.url}/api/v1/tts/syntheses`,
        { text: 'Is it my turn yet?', base_voice: 'm1' },
        second,
      );
      if (short.status !== 202) throw new Error(`second user's POST answered ${short.status}`);
      let job: any;
      for (;;) {
        job = await get(`${server.url}/api/v1/tts/syntheses/${short.body.id}`, second);
        if (job.state === 'succeeded' || job.state === 'failed') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const waited = Date.parse(job.started_at) - Date.parse(job.created_at);
      const done = Date.parse(job.finished_at) - Date.parse(job.created_at);
      // Cancel the rest (an older build without cancel answers 404/405 here; the server is stopped anyway).
      const cancels = await Promise.all(
        accepted.map((id) =>
          fetch(`${server.url}/api/v1/tts/syntheses/${id}`, {
            method: 'DELETE',
            headers: { authorization: `Bearer ${admin}` },
          }),
        ),
      );
      rows.push({
        database: db,
        [`first user: ${JOBS} × ${CHARS} chars`]: `${accepted.length} accepted, ${refused} refused (${Math.round(requestMs)} ms)`,
        "second user's job: queued → started ms": waited,
        'queued → succeeded ms': done,
        'canceled afterwards': cancels.filter((c) => c.status === 202).length,
        'RSS MiB': Math.round(server.rssMiB()),
      });
    } finally {
      await server.stop();
    }
  }
  printTable('Fair order: one user floods the queue, another asks for one short synthesis (one worker)', rows);
}
