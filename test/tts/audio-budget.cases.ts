// Issue 29 item 6: the audio budget (GRAPHQL_MAX_AUDIO_BYTES) is one per client operation, not
// one per subgraph request. A mutation whose root fields alternate between the tts and auth
// subgraphs becomes one subgraph request per run of fields; with a budget per request, 10 ×
// cancelSynthesis(…){synthesis{audio{chunk(1 MiB)}}} alternated with createStreamTicket once
// read 10 MiB in one operation.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

const BUDGET = 512 * 1024; // the smallest GRAPHQL_MAX_AUDIO_BYTES allowed
const ROUNDS = 10;

let server: TestServer;
let user: { token: string };
let id: string;
let bytes: number;

const graphql = (query: string, variables: Record<string, unknown>) =>
  api(server.url).post('/graphql', { query, variables }, { token: user.token });

beforeAll(async () => {
  server = await startTestServer({ GRAPHQL_MAX_AUDIO_BYTES: String(BUDGET) });
  const admin = await login(server.url, ADMIN);
  user = await createUserAndLogin(server.url, admin.access_token, 'alternating');
  const http = api(server.url);
  // Long enough that a few copies, but not ten, fit in the budget.
  const created = await http.post(
    '/api/v1/tts/syntheses',
    {
      text: 'The quick brown fox jumps over the lazy dog, and then it runs far away into the forest.',
      base_voice: 'f3',
    },
    { token: user.token },
  );
  expect(created.status).toBe(202);
  id = created.body.id;
  for (const deadline = Date.now() + 30_000; ; await new Promise((r) => setTimeout(r, 50))) {
    const state = (await http.get(`/api/v1/tts/syntheses/${id}`, { token: user.token })).body.state;
    if (state === 'succeeded') break;
    if (state === 'failed' || Date.now() > deadline) throw new Error(`synthesis ${state}`);
  }
  bytes = (await graphql('query ($id: ID!) { synthesisAudio(id: $id) { bytes } }', { id })).body.data.synthesisAudio
    .bytes;
}, 60_000);
afterAll(() => server?.close());

it('a mutation alternating between subgraphs reads at most GRAPHQL_MAX_AUDIO_BYTES in all', async () => {
  const fit = Math.floor(BUDGET / bytes); // whole copies of the file within the budget
  expect(fit).toBeGreaterThanOrEqual(1);
  expect(fit).toBeLessThan(ROUNDS);

  // keepFinished: a finished synthesis is left as it is (UNCHANGED), with its audio.
  const fields = Array.from(
    { length: ROUNDS },
    (_, i) =>
      `c${i}: cancelSynthesis(id: $id, keepFinished: true) { synthesis { audio { chunk(offset: 0, length: 1048576) } } }` +
      ` t${i}: createStreamTicket { expiresIn }`,
  );
  const res = await graphql(`mutation ($id: ID!) { ${fields.join(' ')} }`, { id });
  expect(res.status).toBe(200);

  // Every ticket was made: the auth subgraph's requests sat between the tts ones.
  for (let i = 0; i < ROUNDS; i++) expect(res.body.data[`t${i}`]).toEqual({ expiresIn: expect.any(Number) });

  const read = Array.from({ length: ROUNDS }, (_, i) => res.body.data[`c${i}`]?.synthesis?.audio?.chunk ?? null);
  const total = read.reduce((sum, chunk) => sum + (chunk ? Buffer.from(chunk, 'base64').length : 0), 0);
  expect(total).toBeLessThanOrEqual(BUDGET);
  expect(read.filter(Boolean)).toHaveLength(fit);
  for (const chunk of read.filter(Boolean)) expect(Buffer.from(chunk, 'base64')).toHaveLength(bytes);

  // The parts over the budget carry the refusal.
  const refusals = (res.body.errors ?? []).filter((e: { message: string }) =>
    e.message.includes('GRAPHQL_MAX_AUDIO_BYTES'),
  );
  expect(refusals).toHaveLength(ROUNDS - fit);
  for (const e of refusals) expect(e.extensions.code).toBe('validation_error');
}, 60_000);
