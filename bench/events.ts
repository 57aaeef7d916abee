// Issue 4's figures: 1,000 concurrent SSE subscribers on the one-process server on MySQL; the
// delay from the 202 of a voice creation to its frame at every subscriber, and the server's RSS.
import http from 'node:http';
import { benchEnv, MYSQL_URL, postJson, printTable, startBenchServer } from './harness';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
const VOICES = Number(process.env.BENCH_EVENTS ?? 20);

interface Subscriber {
  /** Resource id → when its frame arrived (ms, performance.now()). */
  arrivals: Map<string, number>;
  close(): void;
}

export function subscribe(url: string, token: string, types = 'voice.created'): Promise<Subscriber> {
  return new Promise((resolve, reject) => {
    const arrivals = new Map<string, number>();
    const req = http.get(
      `${url}/api/v1/events?types=${types}`,
      { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        let buffered = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          buffered += chunk;
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const m = /^data: (.*)$/m.exec(buffered.slice(0, end));
            buffered = buffered.slice(end + 2);
            if (m) arrivals.set(JSON.parse(m[1]).id, now);
          }
        });
        resolve({ arrivals, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
  });
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

export async function run(): Promise<void> {
  const server = await startBenchServer(benchEnv('mysql'));
  const subscribers: Subscriber[] = [];
  try {
    await new Promise((r) => setTimeout(r, 1000));
    const idleRss = server.rssMiB();
    const login = await postJson(`${server.url}/api/v1/auth/login`, { username: 'bench', password: 'bench password' });
    const token = login.body.access_token;
    for (let i = 0; i < SUBSCRIBERS; i += 100) {
      subscribers.push(
        ...(await Promise.all(
          Array.from({ length: Math.min(100, SUBSCRIBERS - i) }, () => subscribe(server.url, token)),
        )),
      );
    }
    await new Promise((r) => setTimeout(r, 500));
    const subscribedRss = server.rssMiB();

    // One voice at a time, so that each delay is that event's own.
    const acknowledged = new Map<string, number>();
    for (let i = 0; i < VOICES; i++) {
      const res = await postJson(`${server.url}/api/v1/tts/voices`, { name: `fan-out ${i}`, base_voice: 'm1' }, token);
      acknowledged.set(res.body.id, performance.now());
      await new Promise((r) => setTimeout(r, 150));
    }
    await new Promise((r) => setTimeout(r, 1000));
    const loadedRss = server.rssMiB();

    const delays: number[] = [];
    let missing = 0;
    for (const [id, at] of acknowledged) {
      for (const s of subscribers) {
        const arrived = s.arrivals.get(id);
        if (arrived === undefined) missing++;
        else delays.push(arrived - at);
      }
    }
    delays.sort((a, b) => a - b);
    printTable(
      `${SUBSCRIBERS} SSE subscribers, ${VOICES} voice creations, MySQL (${MYSQL_URL.replace(/\/\/.*@/, '//')})`,
      [
        {
          'frames expected': VOICES * SUBSCRIBERS,
          'frames missing': missing,
          'p50 ms': percentile(delays, 50).toFixed(1),
          'p99 ms': percentile(delays, 99).toFixed(1),
          'max ms': delays[delays.length - 1].toFixed(1),
        },
      ],
    );
    printTable('Server RSS (MiB)', [
      {
        idle: idleRss.toFixed(1),
        [`${SUBSCRIBERS} subscribers`]: subscribedRss.toFixed(1),
        'after the events': loadedRss.toFixed(1),
      },
    ]);
  } finally {
    subscribers.forEach((s) => s.close());
    await server.stop();
  }
}
