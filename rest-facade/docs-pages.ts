// The pages a reader starts from: the OpenAPI document, its Swagger UI page and the start page.
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import type { Config } from '../lib/config';
import type { OpenApiDocument } from './openapi';

export const API_PREFIX = '/api/v1';

/** The pages served here, each a GET (the fallbacks answer 405 to another method). */
export const DOCS_PATHS = [`${API_PREFIX}/openapi.json`, `${API_PREFIX}/docs`, '/', API_PREFIX];

/** Serves the document, the Swagger UI page that reads it, and the start page. */
export function mountDocs(app: Express, config: Config, openapi: OpenApiDocument): void {
  app.get(`${API_PREFIX}/openapi.json`, (_req, res) => res.json(openapi));
  // Only the two files the page loads, not the whole package (its package.json, source maps, …).
  const swaggerUi = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  for (const file of DOCS_ASSETS)
    app.get(`${API_PREFIX}/docs/assets/${file}`, (_req, res) => res.sendFile(path.join(swaggerUi, file)));
  app.get(`${API_PREFIX}/docs/init.js`, (_req, res) =>
    res
      .type('application/javascript')
      .send(`window.ui = SwaggerUIBundle({ url: '${API_PREFIX}/openapi.json', dom_id: '#docs' });`),
  );
  app.get(`${API_PREFIX}/docs`, (_req, res) =>
    res.type('html').send(`<!doctype html><html><head><meta charset="utf-8"><title>API docs</title>
<link rel="stylesheet" href="${API_PREFIX}/docs/assets/swagger-ui.css"></head>
<body><div id="docs"></div><script src="${API_PREFIX}/docs/assets/swagger-ui-bundle.js"></script>
<script src="${API_PREFIX}/docs/init.js"></script></body></html>`),
  );
  // Where to start: the docs, the explorer, health and the OpenAPI document.
  const index = indexHandler(config);
  app.get('/', index);
  app.get(API_PREFIX, index);
}

const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js'];

/**
 * GET / and GET /api/v1: links to everything a newcomer looks for; HTML for browsers, JSON
 * otherwise. Only what this process serves: a facade of its own (GATEWAY_URL set) has no
 * GraphQL, explorer or JWKS, which are the gateway's.
 */
function indexHandler(config: Config) {
  const withGateway = config.GATEWAY_URL.length === 0;
  const links: Record<string, string> = {
    docs: `${API_PREFIX}/docs`,
    openapi: `${API_PREFIX}/openapi.json`,
    ...(withGateway ? { graphql: '/graphql', graphql_stream: '/graphql/stream' } : {}),
    ...(withGateway && config.graphqlExplorer ? { graphql_explorer: '/graphql' } : {}),
    events: `${API_PREFIX}/events`,
    health_live: '/health/live',
    health_ready: '/health/ready',
    ...(withGateway ? { jwks: '/.well-known/jwks.json' } : {}),
  };
  const body = { name: 'Federated auth & voice API', version: 'v1', links };
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${body.name}</title></head><body><h1>${body.name}</h1><ul>
${Object.entries(links)
  .map(([name, href]) => `<li><a href="${href}">${name.replace(/_/g, ' ')}</a>: <code>${href}</code></li>`)
  .join('\n')}
</ul></body></html>`;
  return (req: Request, res: Response) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) === 'html') return void res.type('html').send(html);
    res.json(body);
  };
}
