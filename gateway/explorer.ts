// The GraphQL explorer: GraphiQL from npm, served from this process at GET /graphql to
// browsers (GRAPHQL_EXPLORER; on by default outside production). No CDN, no telemetry, no
// request anywhere but this origin: every file comes from node_modules, and the CSP
// (lib/browser.ts) would refuse anything else. Queries and mutations go to POST /graphql,
// subscriptions to /graphql/stream over GraphQL-over-SSE; a token pasted into the Headers tab
// goes with both.
import path from 'node:path';
import express, { Request, Response, Router } from 'express';

const BASE = '/graphql/explorer';

/** The files the page loads: URL name → file in node_modules. */
const ASSETS: Record<string, string> = {
  'react.js': 'react/umd/react.production.min.js',
  'react-dom.js': 'react-dom/umd/react-dom.production.min.js',
  'graphiql.js': 'graphiql/graphiql.min.js',
  'graphiql.css': 'graphiql/graphiql.min.css',
  'graphql-sse.js': 'graphql-sse/umd/graphql-sse.min.js',
};

const resolveAsset = (file: string) => {
  const [pkg, ...rest] = file.split('/');
  return path.join(path.dirname(require.resolve(`${pkg}/package.json`)), ...rest);
};

// Plain ES5 so that it runs as it is; it is served as a file (the CSP allows no inline script).
const INIT = `(function () {
  var params = new URLSearchParams(location.search);
  var http = GraphiQL.createFetcher({ url: '/graphql' });
  var sse = null;
  function isSubscription(p) {
    var text = String(p.query || '').replace(/#[^\\n]*/g, '');
    if (p.operationName) return new RegExp('subscription\\\\s+' + p.operationName + '\\\\b').test(text);
    return /^\\s*subscription\\b/.test(text);
  }
  function fetcher(p, opts) {
    if (!isSubscription(p)) return http(p, opts);
    var headers = (opts && opts.headers) || {};
    sse = sse || graphqlSse.createClient({ url: '/graphql/stream', headers: function () { return currentHeaders; } });
    currentHeaders = headers;
    return sse.iterate({ query: p.query, variables: p.variables || {}, operationName: p.operationName || undefined });
  }
  var currentHeaders = {};
  var intro = [
    '# GraphQL explorer, served by this process: nothing is loaded from anywhere else.',
    '#',
    '# Log in (mutation login) and paste the access token into Headers below:',
    '#   { "Authorization": "Bearer <access_token>" }',
    '# Queries and mutations go to POST /graphql; subscriptions run over',
    '# GraphQL-over-SSE at /graphql/stream, e.g.',
    '#   subscription { events { seq type resourceId occurredAt data } }',
    '',
    'query Me {',
    '  me { id username roles }',
    '}',
    '',
  ].join('\\n');
  ReactDOM.createRoot(document.getElementById('graphiql')).render(
    React.createElement(GraphiQL, {
      fetcher: fetcher,
      defaultQuery: intro,
      query: params.get('query') || undefined,
      variables: params.get('variables') || undefined,
      headers: params.get('headers') || undefined,
      defaultEditorToolsVisibility: 'headers',
      shouldPersistHeaders: false,
      isHeadersEditorEnabled: true,
    }),
  );
})();
`;

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>GraphQL explorer</title>
<link rel="stylesheet" href="${BASE}/graphiql.css">
<style>html, body, #graphiql { height: 100%; margin: 0; }</style>
</head><body><div id="graphiql">Loading the explorer…</div>
<script src="${BASE}/react.js"></script>
<script src="${BASE}/react-dom.js"></script>
<script src="${BASE}/graphiql.js"></script>
<script src="${BASE}/graphql-sse.js"></script>
<script src="${BASE}/init.js"></script>
</body></html>`;

/** A browser navigating to /graphql (it asks for HTML first); GraphQL clients are not. */
const wantsPage = (req: Request) =>
  req.method === 'GET' &&
  req.accepts(['application/json', 'application/graphql-response+json', 'text/html']) === 'text/html';

export function explorer(): Router {
  const router = express.Router();
  // Middleware, not a route: a route that passed GraphQL requests on would leave its template on
  // them, and the metrics would count them under it (routeLabel).
  router.use('/graphql', (req: Request, res: Response, next) => {
    if (req.path !== '/' || !wantsPage(req)) return next();
    res.vary('Accept').type('html').send(PAGE);
  });
  router.get(`${BASE}/init.js`, (_req, res) => res.type('application/javascript').send(INIT));
  for (const [name, file] of Object.entries(ASSETS)) {
    const full = resolveAsset(file);
    router.get(`${BASE}/${name}`, (_req, res) => res.sendFile(full, { maxAge: '1h' }));
  }
  return router;
}
