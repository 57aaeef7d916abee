// The facade's start page links only what the process serves: in the distributed layout (a
// facade of its own, GATEWAY_URL set) GraphQL, its explorer and the JWKS are the gateway's.
import { loadConfig } from '../../lib/config';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { createFacadeApp } from '../../rest-facade/app';
import { facadeRoutes } from '../../subgraphs';

it('links nothing that answers 404 on a facade of its own', async () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', GATEWAY_URL: 'http://127.0.0.1:9' });
  const app = createFacadeApp({
    config,
    routes: facadeRoutes,
    logger: createLogger(config),
    graphql: { execute: async () => ({}), checks: async () => ({}), subscribe: async () => ({}) },
  });
  const server = await listen(app, 0, '127.0.0.1');
  try {
    for (const page of ['/', '/api/v1']) {
      const { links } = (await (
        await fetch(`${server.url}${page}`, { headers: { accept: 'application/json' } })
      ).json()) as { links: Record<string, string> };
      expect(Object.keys(links)).toEqual(expect.arrayContaining(['docs', 'openapi', 'events', 'health_live']));
      expect(Object.keys(links)).not.toEqual(expect.arrayContaining(['graphql']));
      for (const href of Object.values(links)) {
        const res = await fetch(`${server.url}${href}`);
        await res.arrayBuffer();
        expect([href, res.status]).not.toEqual([href, 404]);
      }
    }
  } finally {
    await server.close(100);
  }
});
