// One user's burst of background work holds back no one else's (issue 41 finding 7): user A queues
// 100 tag renames, each over hundreds of notes; user B's one rename of one note is applied within
// seconds while A's are still waiting, because the queue takes users in turn a batch at a time
// (lib/kit/jobs.ts). Past JOBS_PENDING_PER_USER waiting jobs, a rename is 429 with Retry-After.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

const A_NOTES = 300;
const RENAMES = 100;

let server: TestServer;
let http: ReturnType<typeof api>;
let adminToken: string;

beforeAll(async () => {
  server = await startTestServer({
    NOTES_BATCH_ROWS: '50',
    JOBS_PENDING_PER_USER: String(RENAMES),
    LOGIN_MAX_ATTEMPTS_PER_CLIENT: '100000',
  });
  http = api(server.url);
  adminToken = (await login(server.url, ADMIN)).access_token;
}, 60_000);
afterAll(() => server?.close(), 60_000);

/** Runs `work` over 0..count-1, `width` at a time. */
async function inParallel(count: number, width: number, work: (i: number) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < count; i += width)
    await Promise.all(Array.from({ length: Math.min(width, count - i) }, (_, k) => work(i + k)));
}

const tagsOf = async (token: string, id: string): Promise<string[]> =>
  (await http.get(`/api/v1/notes/${id}`, { token })).body.tags;

it("applies another user's rename within seconds while one user's 100 renames are still waiting", async () => {
  const a = await createUserAndLogin(server.url, adminToken, 'fair-a');
  const b = await createUserAndLogin(server.url, adminToken, 'fair-b');
  const aNotes: string[] = [];
  await inParallel(A_NOTES, 3, async (i) => {
    const res = await http.post('/api/v1/notes', { body: `note ${i} #t0` }, { token: a.token });
    expect(res.status).toBe(202);
    aNotes.push(res.body.id);
  });
  const bNote = await http.post('/api/v1/notes', { body: 'mine #old' }, { token: b.token });
  expect(bNote.status).toBe(202);

  // A chain: t0 → t1 → … → t100, every rename over all of A's notes.
  const queuedAt = Date.now();
  await inParallel(RENAMES, 5, async (i) => {
    const res = await http.post('/api/v1/notes/tags/rename', { from: `t${i}`, to: `t${i + 1}` }, { token: a.token });
    expect(res.status).toBe(202);
  });
  const queuedIn = Date.now() - queuedAt;
  const askedAt = Date.now();
  expect((await http.post('/api/v1/notes/tags/rename', { from: 'old', to: 'new' }, { token: b.token })).status).toBe(
    202,
  );
  await until(async () => (await tagsOf(b.token, bNote.body.id)).includes('new'), "B's rename", 10_000, 50);
  const bWaited = Date.now() - askedAt;
  // A's renames are far from done: its notes are not at the end of the chain.
  expect(await tagsOf(a.token, aNotes[0])).not.toContain(`t${RENAMES}`);
  // A is at its limit of waiting jobs (the first few have finished: a few more, then one is refused).
  const refused = [];
  for (let i = 0; i < 10 && !refused.length; i++) {
    const res = await http.post('/api/v1/notes/tags/rename', { from: 'zz', to: `zz${i}` }, { token: a.token });
    if (res.status === 429) refused.push(res);
    else expect(res.status).toBe(202);
  }
  expect(refused).toHaveLength(1);
  expect(refused[0].body.error).toBe('rate_limit_exceeded');
  expect(Number(refused[0].headers.get('retry-after'))).toBeGreaterThan(0);

  console.log(`A queued ${RENAMES} renames in ${queuedIn} ms; B's rename applied after ${bWaited} ms`);
}, 120_000);
