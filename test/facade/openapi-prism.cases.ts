// The answers that are not JSON, through Stoplight Prism's validating proxy: a synthesis's audio
// in each format (by `?format=` and by `Accept`), its timings as JSON and as WebVTT, and a vault
// file's bytes in the type sniffed from them. Prism checks each answer's media type against the
// document's: none may be a violation. (The conformance test drives every operation through
// Prism, but renders nothing, so it never reaches these answers.)
import { api, createUserAndLogin, login, request } from '../helpers/http';
import { PrismProxy, startPrismProxy, violations } from '../helpers/prism';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';
import { until } from '../helpers/wait';

let server: TestServer;
let prism: PrismProxy;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  const doc = (await api(server.url).get('/api/v1/openapi.json')).body;
  prism = await startPrismProxy(doc, server.url);
  const admin = await login(server.url, ADMIN);
  token = (await createUserAndLogin(server.url, admin.access_token, 'prism')).token;
}, 120_000);
afterAll(async () => {
  await prism?.close();
  await server?.close();
});

/** Through Prism: the answer's status and type, and what Prism found wrong with the exchange. */
async function viaPrism(path: string, headers: Record<string, string> = {}) {
  const res = await request(prism.url, 'GET', path, { token, headers });
  return { path, status: res.status, type: res.headers.get('content-type'), violations: violations(res.headers) };
}

it('audio in every format, timings as JSON and WebVTT, and sniffed vault content are documented', async () => {
  const http = api(server.url);
  const voice = await http.post('/api/v1/tts/voices', { name: 'Prism', base_voice: 'f1' }, { token });
  const synthesis = await http.post(
    '/api/v1/tts/syntheses',
    { text: 'Checked by Prism.', voice_id: voice.body.id },
    { token },
  );
  const id = synthesis.body.id as string;
  await until(
    async () => (await http.get(`/api/v1/tts/syntheses/${id}`, { token })).body.state === 'succeeded',
    'the synthesis to succeed',
    60_000,
  );
  // A PNG's signature and header: the type is sniffed from the bytes, whatever the name says.
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
  const item = await http.post(
    '/api/v1/vault/items',
    { file: { name: 'pixel.bin', content_base64: png.toString('base64') } },
    { token },
  );
  await until(
    async () => (await http.get(`/api/v1/vault/items/${item.body.id}`, { token })).body.state !== 'pending',
    'the item to be enriched',
  );

  const audio = `/api/v1/tts/syntheses/${id}/audio`;
  const answers = [
    ...(await Promise.all(['wav', 'pcm', 'mp3', 'opus', 'flac'].map((f) => viaPrism(`${audio}?format=${f}`)))),
    await viaPrism(audio, { accept: 'audio/mpeg' }),
    await viaPrism(`/api/v1/tts/syntheses/${id}/timings`),
    await viaPrism(`/api/v1/tts/syntheses/${id}/timings?format=vtt`),
    await viaPrism(`/api/v1/vault/items/${item.body.id}/content`),
  ];
  expect(answers.map(({ path, status, type }) => [path, status, type?.split(';')[0]])).toEqual([
    [`${audio}?format=wav`, 200, 'audio/wav'],
    [`${audio}?format=pcm`, 200, 'audio/pcm'],
    [`${audio}?format=mp3`, 200, 'audio/mpeg'],
    [`${audio}?format=opus`, 200, 'audio/ogg'],
    [`${audio}?format=flac`, 200, 'audio/flac'],
    [audio, 200, 'audio/mpeg'],
    [`/api/v1/tts/syntheses/${id}/timings`, 200, 'application/json'],
    [`/api/v1/tts/syntheses/${id}/timings?format=vtt`, 200, 'text/vtt'],
    [`/api/v1/vault/items/${item.body.id}/content`, 200, 'image/png'],
  ]);
  expect(answers.filter((a) => a.violations.length)).toEqual([]);
}, 180_000);
