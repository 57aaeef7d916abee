// GRAPHQL_MAX_RESPONSE_BYTES holds for the facade's own operations too: in one process they skip
// Apollo Server's pipeline (gateway/direct-execution.ts), which is where HTTP clients' answers
// are capped, so the cap is applied there as well.
import { api, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ GRAPHQL_MAX_RESPONSE_BYTES: String(16 * 1024) });
});
afterAll(() => server.close());

it('a REST answer over the cap is a 400 validation_error naming the limit; one under it is served', async () => {
  const http = api(server.url);
  const { access_token: token } = await login(server.url, ADMIN);
  const big = await http.get('/api/v1/tts/base-voices', { token });
  expect(big.status).toBe(400);
  expect(big.body).toMatchObject({
    error: 'validation_error',
    details: { limit: 'GRAPHQL_MAX_RESPONSE_BYTES', max: 16 * 1024 },
  });
  const small = await http.get('/api/v1/auth/session', { token });
  expect(small.status).toBe(200);
});
