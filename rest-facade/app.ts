// The REST facade: Express, driven by the route table. It validates, runs the route's
// GraphQL operation and shapes the answer; it holds no business rules.
import type { BodyReadError } from '../lib/graphql-errors';
import path from 'node:path';
import express, { Express, NextFunction, Request, Response } from 'express';
import type { Config } from '../lib/config';
import { bodyCaller, jsonBody, largeBodyAdmission } from '../lib/large-bodies';
import type { Logger } from '../lib/logger';
import { createBaseApp, HEALTH_PATHS, sendJson } from '../lib/http-app';
import { AppError, DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode } from '../lib/errors';
import { ExpensiveGate, sharedExpensiveGate } from '../lib/kit/expensive';
import { snakeKeys } from '../lib/naming';
import { IDEMPOTENCY_KEY_HEADER, REQUEST_ID_HEADER, STREAM_TICKET_HEADER } from '../lib/request-context';
import type { GraphQLClient, GraphQLResult } from './graphql-client';
import { graphqlOperation } from './graphql-mapping';
import { openApiDocument } from './openapi';
import { OPENAI_SPEECH_PATH, openAiSpeechOpenApi, openAiSpeechRouter } from './openai';
import { carriesCredentials, ModuleRoutes, NO_STORE_HEADERS, RouteInput, RouteSpec } from './route-spec';
import { routeTable } from './route-table';
import { sendError, sendGraphQLError } from './errors';
import { drained } from './slow-reader';
import { compileValidator } from './validation';

export const API_PREFIX = '/api/v1';

export interface FacadeOptions {
  config: Config;
  logger: Logger;
  graphql: GraphQLClient;
  /** Each module's routes, in order: the entry point hands them over (subgraphs/index.ts `facadeRoutes`), as the gateway is handed its subgraphs. */
  routes: ModuleRoutes[];
  /** Mounts what the entry point serves beside the facade (the gateway, the JWKS) before the fallbacks. */
  mount?: (app: Express) => void;
}

const hasBody = (req: Request) =>
  Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;

const pathPattern = (p: string) => new RegExp(`^${p.replace(/:(\w+)/g, '[^/]+')}/?$`);

export function createFacadeApp(options: FacadeOptions): Express {
  const { config, logger, graphql } = options;
  const table = routeTable(options.routes);
  const { routes } = table;
  const app = createBaseApp({
    config,
    logger,
    checks: () => graphql.checks(),
    healthPrefixes: [API_PREFIX],
    browsers: true,
  });
  // No ETag hashed from every JSON body: answers that have a version carry it as their ETag
  // (voices), the audio its own; If-None-Match is honoured for those.
  app.set('etag', false);

  // ---- documentation ---------------------------------------------------------------------
  const openapi = openApiDocument(table, config, openAiSpeechOpenApi);
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

  options.mount?.(app);

  // ---- the route table -------------------------------------------------------------------
  const api = express.Router();
  // Uploads take a raw body of any type, read by their own handler (uploadHandler): no JSON parser.
  const uploads = routes
    .filter((r) => r.upload)
    .map((r) => ({ pattern: pathPattern(r.path), method: r.method.toUpperCase() }));
  const isUpload = (req: Request) => uploads.some((u) => u.method === req.method && u.pattern.test(req.path));
  api.use((req, res, next) => {
    if (isUpload(req)) return next();
    if (hasBody(req) && !req.is(['application/json', 'application/*+json']))
      return sendError(res, 'unsupported_media_type');
    next();
  });
  // Each route's body limit: BODY_LIMIT_BYTES, or its own (a hub import takes a whole canvas).
  // Large bodies are admitted and parsed off the event loop (lib/large-bodies.ts).
  const jsonParser = (limit: number) =>
    jsonBody(config, limit, (res, e) => sendError(res, e.code, e.message, e.details, e.retryAfter));
  const defaultParser = jsonParser(config.BODY_LIMIT_BYTES);
  const ownLimits = routes
    .filter((r) => r.bodyLimit)
    .map((r) => ({
      pattern: pathPattern(r.path),
      method: r.method.toUpperCase(),
      parser: jsonParser(r.bodyLimit!(config)),
    }));
  api.use((req, res, next) => {
    if (isUpload(req)) return next();
    const own = ownLimits.find((o) => o.method === req.method && o.pattern.test(req.path));
    (own?.parser ?? defaultParser)(req, res, next);
  });
  // The process's gate on expensive operations, shared with the modules running here (one process).
  const gate = sharedExpensiveGate(config);
  for (const route of routes) {
    const handler = route.stream
      ? streamHandler(route, graphql, config)
      : route.download
        ? downloadHandler(route, graphql, config)
        : route.upload
          ? uploadHandler(route, graphql, config)
          : routeHandler(route, graphql, gate);
    api[route.method](route.path, handler);
  }
  app.use(API_PREFIX, api);
  // The OpenAI-compatible speech endpoint: a compatibility surface beside /api/v1 (rest-facade/openai.ts).
  app.use(OPENAI_SPEECH_PATH, openAiSpeechRouter(graphql, config));

  // ---- fallbacks -------------------------------------------------------------------------
  const known = [
    ...routes.map((r) => ({ pattern: pathPattern(`${API_PREFIX}${r.path}`), method: r.method.toUpperCase() })),
    { pattern: pathPattern(OPENAI_SPEECH_PATH), method: 'POST' },
    ...[
      ...HEALTH_PATHS,
      ...HEALTH_PATHS.map((p) => API_PREFIX + p),
      `${API_PREFIX}/openapi.json`,
      `${API_PREFIX}/docs`,
      '/',
      API_PREFIX,
    ].map((p) => ({ pattern: pathPattern(p), method: 'GET' })),
  ];
  app.use((req, res) => {
    const allowed = [...new Set(known.filter((k) => k.pattern.test(req.path)).map((k) => k.method))];
    if (!allowed.length) return sendError(res, 'not_found', `No route ${req.method} ${req.path}.`);
    if (allowed.includes('GET')) allowed.push('HEAD');
    res.setHeader('Allow', allowed.join(', '));
    sendError(res, 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}.`);
  });
  app.use((err: BodyReadError | undefined, req: Request, res: Response, _next: NextFunction) => {
    if (clientMistake(err, req, res, config)) return;
    req.log?.error({ err }, 'unhandled error');
    sendError(res, 'internal_error');
  });
  return app;
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

/** Encodings the JSON body parser inflates. */
const CONTENT_ENCODINGS = ['identity', 'gzip', 'deflate', 'br'];

/**
 * Errors raised by Express and its body parser for what the client sent: answered with the
 * error object and a 4xx, never a 500. True when it was one of these and has been answered.
 */
function clientMistake(err: BodyReadError | undefined, req: Request, res: Response, config: Config): boolean {
  const encoding =
    String(req.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase() || 'identity';
  const status = Number(err?.status ?? err?.statusCode);
  const encodingDetails = {
    content_encoding: [`must be one of ${CONTENT_ENCODINGS.join(', ')}, and the body encoded with it`],
  };
  if (err?.type === 'entity.too.large') {
    const limit = Number((err as { limit?: number }).limit) || config.BODY_LIMIT_BYTES;
    sendError(res, 'payload_too_large', `The request body is larger than ${limit} bytes.`);
  } else if (err?.type === 'entity.parse.failed') {
    sendError(res, 'validation_error', 'The request body is not valid JSON.', { body: ['is not valid JSON'] });
  } else if (err?.type === 'charset.unsupported') {
    sendError(
      res,
      'unsupported_media_type',
      `The charset "${String(err.charset)}" is not supported; send JSON in UTF-8.`,
      {
        content_type: ['charset must be utf-8'],
      },
    );
  } else if (err?.type === 'encoding.unsupported') {
    sendError(res, 'unsupported_media_type', `Content-Encoding "${encoding}" is not supported.`, encodingDetails);
  } else if (err instanceof URIError) {
    // Express decodes path parameters with decodeURIComponent: %zz, a lone %, a cut-off or overlong UTF-8 sequence.
    sendError(res, 'validation_error', 'The request path has malformed percent-encoding.', {
      path: ['%XX escapes must spell valid UTF-8'],
    });
  } else if (status >= 400 && status < 500 && encoding !== 'identity' && /^(Z_|ERR_)/.test(String(err?.code ?? ''))) {
    // A body that says it is gzip, deflate or br but is not.
    sendError(
      res,
      'unsupported_media_type',
      `The request body could not be decoded as Content-Encoding "${encoding}".`,
      encodingDetails,
    );
  } else if (status >= 400 && status < 500) {
    // Anything else a parser refused (an aborted body, a wrong Content-Length, …).
    const code =
      (Object.keys(ERROR_STATUS) as ErrorCode[]).find((c) => ERROR_STATUS[c] === status) ?? 'validation_error';
    sendError(res, code, err?.expose && typeof err.message === 'string' ? err.message : DEFAULT_MESSAGES[code]);
  } else {
    return false;
  }
  return true;
}

/** The checks every route makes before its operation runs: the token is there, the input valid. */
function routeInput(
  route: RouteSpec,
  validate: ReturnType<typeof compileValidator>,
  req: Request,
  res: Response,
): RouteInput | undefined {
  // A stream may be opened with a ticket in the URL instead (browsers' EventSource sends no header).
  if (route.auth && !req.headers.authorization && !(route.stream && typeof req.query.ticket === 'string')) {
    sendError(res, 'unauthorized', 'A Bearer access token is required.');
    return undefined;
  }
  const input: RouteInput = {
    params: { ...req.params } as Record<string, string>,
    query: { ...req.query },
    body: req.body,
    headers: req.headers,
  };
  const problems = validate(input) ?? route.check?.(input);
  if (problems) {
    sendError(res, 'validation_error', 'The request is invalid.', problems);
    return undefined;
  }
  return input;
}

/** Runs one operation for the request; sends the error object and answers undefined when it failed. */
async function run(
  graphql: GraphQLClient,
  route: RouteSpec,
  req: Request,
  res: Response,
  query: string,
  variables: Record<string, unknown>,
) {
  let result;
  try {
    result = await graphql.execute({
      query,
      variables,
      headers: {
        [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER],
        'user-agent': req.headers['user-agent'],
        ...(route.auth ? { authorization: req.headers.authorization } : {}),
        // Commands honour Idempotency-Key (lib/idempotency.ts, in the gateway's pipeline).
        ...(route.method === 'post' && !route.upload && req.headers[IDEMPOTENCY_KEY_HEADER] !== undefined
          ? { [IDEMPOTENCY_KEY_HEADER]: req.headers[IDEMPOTENCY_KEY_HEADER] }
          : {}),
      },
      clientIp: req.ip ?? '',
    });
  } catch (err) {
    req.log.error({ err }, 'gateway unreachable');
    sendError(res, 'service_unavailable');
    return undefined;
  }
  if (result.errors?.length) {
    sendGraphQLError(res, result.errors);
    return undefined;
  }
  return result;
}

/**
 * The early refusal of an expensive route (lib/kit/expensive.ts): a caller whose token this
 * process has verified before and whose slots are all taken gets 429 at once, before the
 * request's input is checked or its operation parsed, planned or run. A refusal costs the least
 * it can, since a caller at full rate sends little else; the gate still refuses in the
 * operation (distributed, or for a token not seen before).
 */
function refusedEarly(route: RouteSpec, graphql: GraphQLClient, gate: ExpensiveGate, req: Request, res: Response) {
  const expensive = route.expensive;
  if (!expensive || !graphql.knownUser) return false;
  if (expensive.whenQuery !== undefined) {
    const given = req.query[expensive.whenQuery];
    if (given === undefined || given === '') return false;
  }
  const userId = graphql.knownUser(req.headers.authorization);
  const refusal = userId ? gate.refusal(userId, expensive.kind) : undefined;
  if (!refusal) return false;
  sendError(res, 'rate_limit_exceeded', refusal.message, snakeKeys(refusal.details), refusal.retryAfter);
  return true;
}

function routeHandler(route: RouteSpec, graphql: GraphQLClient, gate: ExpensiveGate) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  const textOperation = route.text
    ? graphqlOperation({
        ...route,
        operationId: `${route.operationId}Text`,
        graphql: { ...route.graphql, field: route.text.field, select: '' },
      })
    : undefined;
  return async (req: Request, res: Response) => {
    if (refusedEarly(route, graphql, gate, req, res)) return;
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    if (textOperation && input.query[route.text!.param] === route.text!.value) {
      const text = await run(graphql, route, req, res, textOperation.query, textOperation.variables(input));
      if (!text) return;
      return void res
        .status(200)
        .type(route.text!.contentType)
        .send(String(text.data?.result ?? ''));
    }
    const result = await run(graphql, route, req, res, operation.query, operation.variables(input));
    if (!result) return;
    const data = route.graphql.also ? result.data : result.data?.result;
    if (data == null) return sendError(res, 'not_found');
    if (route.location) res.location(route.location(data, input));
    if (route.etag) {
      res.setHeader('ETag', route.etag(data));
      res.status(route.status);
      if (req.fresh) return void res.status(304).end(); // If-None-Match names this version
    }
    if (carriesCredentials(route)) res.set(NO_STORE_HEADERS);
    sendJson(
      res,
      route.status,
      route.ack ? { id: data.id, message: route.ack } : route.present ? route.present(data, input) : data,
    );
  };
}

/** The bytes of one upload piece sent to GraphQL (base64 in a JSON body, under LARGE_BODY_BYTES). */
const UPLOAD_PIECE_BYTES = 512 * 1024;

/**
 * A raw body streamed through GraphQL a piece at a time (route.upload): never more than a piece
 * or two in memory, whatever its size. A Content-Length past the limit is 413 before any byte is
 * read; a chunked body is cut off (and what was received given up) as soon as it passes it. Each
 * upload in flight counts as one large body of its caller (LARGE_BODIES_PER_USER, lib/large-bodies.ts).
 */
function uploadHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const begin = graphqlOperation({ ...route, graphql: { ...route.graphql, select: '{ id }' } });
  const { append, finish, abort, maxBytes, limit } = route.upload!;
  const name = route.operationId[0].toUpperCase() + route.operationId.slice(1);
  const appendQuery = `mutation ${name}Append($id: ID!, $offset: Float!, $chunk: String!) { result: ${append}(id: $id, offset: $offset, chunk: $chunk) }`;
  const finishQuery = graphqlOperation({
    operationId: `${route.operationId}Finish`,
    graphql: { kind: 'mutation', field: finish, args: { id: { type: 'ID!', value: (i) => i.params.id } } },
    response: route.response,
  }).query;
  const abortQuery = `mutation ${name}Abort($id: ID!) { result: ${abort}(id: $id) }`;
  return async (req: Request, res: Response) => {
    const max = maxBytes(config);
    const tooLarge = () => sendError(res, 'payload_too_large', `The file is larger than ${max} bytes.`, { limit, max });
    const declared = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
    if (declared !== undefined && declared > max) {
      res.setHeader('Connection', 'close');
      return tooLarge();
    }
    const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase();
    if (encoding !== 'identity')
      return sendError(res, 'unsupported_media_type', 'Send the file as it is, without Content-Encoding.', {
        content_encoding: ['must be identity'],
      });
    req.body = {};
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    const admitted = largeBodyAdmission(config).admit(bodyCaller(req), UPLOAD_PIECE_BYTES);
    if (admitted instanceof AppError)
      return sendError(res, admitted.code, admitted.message, admitted.details, admitted.retryAfter);
    res.once('close', admitted);
    const started = await run(graphql, route, req, res, begin.query, begin.variables(input));
    if (!started) return;
    const id = String((started.data!.result as { id: string }).id);
    let offset = 0;
    let ok = false;
    const send = async (piece: Buffer) => {
      const r = await run(graphql, route, req, res, appendQuery, { id, offset, chunk: piece.toString('base64') });
      if (!r) return false;
      offset += piece.length;
      return true;
    };
    try {
      let pending: Buffer[] = [];
      let size = 0;
      for await (const data of req as AsyncIterable<Buffer>) {
        if (offset + size + data.length > max) {
          res.setHeader('Connection', 'close');
          tooLarge();
          return;
        }
        pending.push(data);
        size += data.length;
        while (size >= UPLOAD_PIECE_BYTES) {
          const all = Buffer.concat(pending);
          if (!(await send(all.subarray(0, UPLOAD_PIECE_BYTES)))) return;
          pending = [all.subarray(UPLOAD_PIECE_BYTES)];
          size = pending[0].length;
        }
      }
      if (size && !(await send(Buffer.concat(pending)))) return;
      const result = await run(graphql, route, req, res, finishQuery, { id });
      if (!result) return;
      ok = true;
      const data = result.data!.result as Record<string, unknown>;
      if (route.location) res.location(route.location(data, input));
      sendJson(res, route.status, route.present ? route.present(data, input) : data);
    } catch (err) {
      // The client went away mid-body (or its body broke off): nothing to answer.
      req.log?.info({ err }, 'upload broke off');
      if (!res.headersSent)
        sendError(res, 'validation_error', 'The request body broke off.', { body: ['is incomplete'] });
    } finally {
      // Given up: its pieces go (nothing half-written stays).
      if (!ok)
        await graphql
          .execute({
            query: abortQuery,
            variables: { id },
            headers: { authorization: req.headers.authorization },
            clientIp: req.ip ?? '',
          })
          .catch(() => undefined);
    }
  };
}

/** The bytes of one download piece: what the first request fetches, and each later one. */
const DOWNLOAD_PIECE_BYTES = 512 * 1024;

/**
 * A file fetched a piece at a time through GraphQL and sent as it comes, with one byte range
 * (RFC 9110: 206 + Content-Range, 416 past the end; several ranges get the whole file),
 * ETag / If-None-Match / If-Range, and HEAD. Errors before the first byte are error objects;
 * after it, all that can be done is to cut the response short.
 */
function downloadHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  const { chunk, formats, stream } = route.download!;
  const names = Object.keys(formats ?? {});
  return async (req: Request, res: Response) => {
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    let contentType = route.download!.contentType;
    if (formats) {
      // ?format= wins; else Accept (none, or */*: the first format); an Accept that matches none is 406.
      let name = typeof input.query.format === 'string' ? input.query.format : undefined;
      if (name === undefined) {
        const accepted = req.headers.accept ? req.accepts(names.map((n) => formats[n])) : formats[names[0]];
        name = names.find((n) => formats[n] === accepted);
        if (name === undefined)
          return sendError(
            res,
            'not_acceptable',
            `The audio is served as ${names.map((n) => formats[n]).join(', ')}; Accept names none of them.`,
            { accepted: names.map((n) => formats[n]) },
          );
      }
      input.query.format = name;
      contentType = formats[name];
      res.vary('Accept');
    }
    const variables = operation.variables(input);
    const meta = await run(graphql, route, req, res, operation.query, variables);
    if (!meta) return;
    const { bytes, etag, content_type, file_name } = meta.data!.result as {
      bytes: number | null;
      etag: string;
      content_type?: string;
      file_name?: string;
    };
    if (bytes === null && stream)
      return streamDownload(req, res, graphql, route, config, contentType, stream, variables);
    if (bytes === null) return sendError(res, 'internal_error');
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('ETag', etag);
    res.setHeader('Cache-Control', 'private, max-age=3600');
    if (req.fresh) return void res.status(304).end();

    let [start, end] = [0, bytes - 1];
    const ifRange = req.headers['if-range'];
    const ranges =
      req.headers.range && (!ifRange || ifRange === etag) ? req.range(bytes, { combine: true }) : undefined;
    if (ranges === -1) {
      res.setHeader('Content-Range', `bytes */${bytes}`);
      return sendError(
        res,
        'range_not_satisfiable',
        `The audio has ${bytes} bytes; the range asked for lies outside it.`,
        { size: bytes },
      );
    }
    const partial = Array.isArray(ranges) && ranges.type === 'bytes' && ranges.length === 1;
    if (partial) [start, end] = [ranges[0].start, ranges[0].end];

    /** The bytes from `offset` (empty at the end, or when the fetch failed). */
    const piece = async (offset: number): Promise<Buffer> => {
      const length = Math.min(DOWNLOAD_PIECE_BYTES, end + 1 - offset);
      if (length <= 0) return Buffer.alloc(0);
      const result = await run(graphql, route, req, res, chunk, { ...variables, offset, length });
      return Buffer.from((result?.data?.result as { chunk?: string } | undefined)?.chunk ?? '', 'base64');
    };
    const first = req.method === 'HEAD' ? Buffer.alloc(0) : await piece(start);
    if (res.headersSent) return; // the piece failed, and its error object went out

    res.status(partial ? 206 : 200);
    // attachment() sets a type from the name's extension: the sniffed type is set after it.
    if (route.download!.attachment) res.attachment(file_name ?? 'download');
    res.type(content_type ?? contentType);
    if (route.download!.attachment) {
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Content-Security-Policy', "default-src 'none'; sandbox");
    }
    res.setHeader('Content-Length', String(end + 1 - start));
    if (partial) res.setHeader('Content-Range', `bytes ${start}-${end}/${bytes}`);
    if (req.method === 'HEAD') return void res.end();
    let open = true;
    const closed = new Promise<void>((resolve) => res.once('close', () => ((open = false), resolve())));
    let data = first;
    for (let at = start; ;) {
      if (!data.length && at <= end) return void res.destroy(); // the file changed or went away mid-way
      at += data.length;
      if (!res.write(data) && !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000)))
        return void res.destroy();
      if (at > end || !open) break;
      data = await piece(at);
    }
    res.end();
  };
}

/**
 * A file still being made (the first request for an encoding), sent as it grows: asked for again
 * at once after a piece, after a growing pause (to SPEECH_POLL_MS) after none, until its end.
 * No Range and no Content-Length on this one; later requests are served from the finished file.
 */
async function streamDownload(
  req: Request,
  res: Response,
  graphql: GraphQLClient,
  route: RouteSpec,
  config: Config,
  contentType: string,
  query: string,
  variables: Record<string, unknown>,
): Promise<void> {
  let open = true;
  const closed = new Promise<void>((resolve) => res.once('close', () => ((open = false), resolve())));
  let lastProgress = Date.now();
  for (let offset = 0, wait = 5; open;) {
    const result = await run(graphql, route, req, res, query, { ...variables, offset, length: DOWNLOAD_PIECE_BYTES });
    if (!result) return void (res.headersSent && res.destroy());
    const piece = result.data?.result as { chunk?: string; end?: boolean } | undefined;
    const data = Buffer.from(piece?.chunk ?? '', 'base64');
    if (!res.headersSent) {
      res.status(200);
      res.type(contentType);
      res.setHeader('Cache-Control', 'private, no-cache');
      if (req.method === 'HEAD') return void res.end();
    }
    if (data.length) {
      offset += data.length;
      lastProgress = Date.now();
      wait = 5;
      if (!res.write(data) && !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000)))
        return void res.destroy();
    }
    if (piece?.end) return void res.end();
    if (data.length) continue;
    // The encoding failed or stopped (its process went away): cut short, never a wrong "complete" file.
    if (Date.now() - lastProgress > config.SPEECH_MAX_WAIT_SECONDS * 1000) return void res.destroy();
    await new Promise((r) => setTimeout(r, wait));
    wait = Math.min(config.SPEECH_POLL_MS, wait * 2);
  }
}

// A result shared by many streams (see gateway/events.ts) is turned into its frame once.
const frames = new WeakMap<object, string>();
function frameText(route: RouteSpec, result: GraphQLResult): string {
  let text = frames.get(result);
  if (text === undefined) {
    const frame = route.stream!.frame(result.data!.result);
    text = `id: ${frame.id}\nevent: ${frame.event}\ndata: ${JSON.stringify(frame.data)}\n\n`;
    frames.set(result, text);
  }
  return text;
}

/**
 * A subscription as Server-Sent Events. Errors before the stream starts are ordinary error
 * objects with their status; once it runs, each result is a frame, written only as fast as the
 * client reads: a client that has taken nothing for two heartbeat periods is cut off.
 */
function streamHandler(route: RouteSpec, graphql: GraphQLClient, config: Config) {
  const validate = compileValidator(route);
  const operation = graphqlOperation(route);
  return async (req: Request, res: Response) => {
    const input = routeInput(route, validate, req, res);
    if (!input) return;
    let results;
    try {
      results = await graphql.subscribe({
        query: operation.query,
        variables: operation.variables(input),
        headers: {
          [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER],
          authorization: req.headers.authorization,
          [STREAM_TICKET_HEADER]: typeof input.query.ticket === 'string' ? input.query.ticket : undefined,
        },
      });
    } catch (err) {
      req.log.error({ err }, 'gateway unreachable');
      return sendError(res, 'service_unavailable');
    }
    if (!(Symbol.asyncIterator in results)) return sendGraphQLError(res, results.errors ?? []);

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('X-Accel-Buffering', 'no'); // proxies must not hold frames back
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    const stallMs = 2 * config.EVENT_HEARTBEAT_SECONDS * 1000;
    // Not once ended: a stopping server ends the stream itself (lib/http-server.ts).
    const heartbeat = setInterval(
      () => res.writableEnded || res.write(': keep-alive\n\n'),
      config.EVENT_HEARTBEAT_SECONDS * 1000,
    );
    let open = true;
    const closed = new Promise<void>((resolve) =>
      res.once('close', () => {
        open = false;
        resolve();
        void results.return?.(undefined);
      }),
    );
    try {
      for await (const result of results) {
        if (!open || res.writableEnded) break;
        if (result.errors?.length) {
          const e = result.errors[0];
          res.write(
            `event: error\ndata: ${JSON.stringify({ error: e.extensions?.code ?? 'internal_error', message: e.message })}\n\n`,
          );
          break;
        }
        const text = frameText(route, result);
        if (!res.write(text) && !(await drained(res, closed, stallMs))) {
          // It stopped reading: cut it off (it resumes with Last-Event-ID when it comes back).
          res.destroy();
          break;
        }
      }
    } catch (err) {
      req.log.error({ err }, 'event stream failed');
    } finally {
      clearInterval(heartbeat);
      if (open && !res.writableEnded) res.end();
    }
  };
}
