// The event stream as GraphQL: `subscription { events(after, types, scope) }` over
// GraphQL-over-SSE (graphql-sse) at /graphql/stream. Apollo's gateway does not federate
// subscriptions, so this small schema is served beside it, on the event log that every
// subgraph's outbox feeds. The REST facade's /api/v1/events is a bridge onto it. This file
// composes the parts: the schema (./events-schema.ts), admission (./event-admission.ts), the
// results (./event-results.ts), and SSE's HTTP side and back-pressure (./sse-http.ts, ./sse-back-pressure.ts).
import express, { Router } from 'express';
import { createSourceEventStream, execute, ExecutionResult, GraphQLSchema, OperationTypeNode } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/express';
import type { ApiKeyExchange } from '../lib/api-keys';
import type { Config } from '../lib/config';
import { jsonBody } from '../lib/large-bodies';
import { DocumentCache } from '../lib/document-cache';
import { EventLog, startPruning } from '../lib/event-log';
import { EventStream, StreamEvent } from '../lib/event-stream';
import type { Logger } from '../lib/logger';
import {
  FormattedResult,
  Operation,
  operationLimits,
  operationPipeline,
  OperationResult,
} from '../lib/operation-pipeline';
import { headerValue, Headers, STREAM_TICKET_HEADER } from '../lib/request-context';
import { effectiveScopes, scopesOfToken, type TokenVerifier } from '../lib/tokens';
import { streamCaps, streamPrincipal } from './event-admission';
import { EventResults, mapEvents, sharedResults } from './event-results';
import { buildEventsSchema, EventsContext } from './events-schema';
import { writeGate } from './sse-back-pressure';
import { distinctConnectionsOnly, refusedBeforeStream } from './sse-http';

export { EventScope } from './events-schema';
export type { EventResult, EventResults, MapOptions } from './event-results';

export interface OperationRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers: Headers;
}

/** What the pipeline knows of a caller of the event stream. */
interface StreamCaller {
  headers: Headers;
  /** graphql-sse's back-pressure gate (writeGate), on /graphql/stream. */
  ready?: () => Promise<boolean>;
}

export interface EventsService {
  /** POST (or GET) /graphql/stream. */
  router: Router;
  /** A subscription run in this process: its results, or the errors that kept it from starting. */
  subscribe(request: OperationRequest): Promise<EventResults | FormattedResult>;
  /** A query of this schema (eventStreamPosition), for /graphql/stream and the gateway's /graphql alike. */
  query(request: OperationRequest): Promise<FormattedResult>;
  /** What /graphql/stream serves; the gateway shows it in /graphql's introspection too. */
  schema: GraphQLSchema;
}

/** What a process that serves event streams runs: the poller, pruning, and the GraphQL service. */
export async function startEvents(options: {
  config: Config;
  logger: Logger;
  verifier: TokenVerifier;
  log: EventLog;
  /** API keys as bearer tokens (lib/api-keys.ts). */
  apiKeys?: ApiKeyExchange;
}): Promise<EventsService & { stop(): Promise<void> }> {
  const { config, logger, log } = options;
  const stream = new EventStream(log, {
    pollMs: config.EVENT_POLL_MS,
    maxPollMs: config.POLL_MAX_IDLE_MS,
    bufferSize: config.EVENT_BUFFER_SIZE,
    logger,
  });
  await stream.start();
  const stopPruning = startPruning(log, config.EVENT_RETENTION_SECONDS, logger);
  const service = await createEventsService({
    config,
    log,
    stream,
    verifier: options.verifier,
    logger,
    apiKeys: options.apiKeys,
  });
  return {
    ...service,
    async stop() {
      stopPruning();
      await stream.stop();
    },
  };
}

export async function createEventsService(options: {
  config: Config;
  log: EventLog;
  stream: EventStream;
  verifier: TokenVerifier;
  logger: Logger;
  apiKeys?: ApiKeyExchange;
}): Promise<EventsService> {
  const { config, log, stream, verifier, logger } = options;
  const stallMs = 2 * config.EVENT_HEARTBEAT_SECONDS * 1000;
  const caps = streamCaps(config.EVENT_STREAMS_PER_USER);
  const principalOf = streamPrincipal(verifier, log, options.apiKeys);
  const schema = await buildEventsSchema(log);
  const resultFor = sharedResults(schema);

  // Documents by text, so that subscribers sending the same operation share one DocumentNode.
  // "Did you mean …?" only where the schema may be read anyway.
  const documents = new DocumentCache(schema, { hideSuggestions: !config.introspection });

  /** A subscription admitted by the pipeline: counted against the user's streams, then its results. */
  async function subscribe(op: Operation<StreamCaller, EventsContext>): Promise<OperationResult | void> {
    const contextValue = op.context!;
    const { principal } = contextValue;
    // Counted before anything is awaited, so that concurrent requests cannot all slip through.
    const release = caps.admit(principal.userId);
    if (release instanceof Error) return { errors: [release] };
    const { request, document } = op;
    try {
      const source = await createSourceEventStream({
        schema,
        document: document!,
        variableValues: request.variables,
        operationName: request.operationName,
        contextValue,
      });
      if (!(Symbol.asyncIterator in source)) {
        release();
        return { errors: source.errors ?? [] };
      }
      op.stream = mapEvents(
        source as AsyncGenerator<StreamEvent>,
        (event) => resultFor(document!, request.variables, event, contextValue),
        {
          expiresAt: principal.expiresAt,
          onEnd: release,
          ready: op.caller.ready,
        },
      );
    } catch (err) {
      release();
      throw err;
    }
  }

  // The one operation pipeline (lib/operation-pipeline): limits once per subscribe, the document,
  // the caller, then a query's execution or a subscription's stream.
  const pipeline = operationPipeline<StreamCaller, EventsContext>({
    limits: {
      limits: operationLimits(config),
      authenticated: (op) => Boolean(headerValue(op.caller.headers, 'authorization')),
    },
    documents: () => documents,
    principal: async (op) => {
      const principal = await principalOf(op.caller.headers);
      const scopes = effectiveScopes(
        principal,
        await log.scopesOf(principal.userId, principal.issuedAt, scopesOfToken(principal)),
      );
      return { principal, scopes, scopesChangedAt: log.knownScopeChangeAt(principal.userId), stream };
    },
    scopes: (op) => ({ scopes: op.context?.scopes }),
    execute: (op) =>
      op.operation!.operation === OperationTypeNode.SUBSCRIPTION
        ? subscribe(op)
        : execute({
            schema,
            document: op.document!,
            variableValues: op.request.variables,
            operationName: op.request.operationName,
            contextValue: op.context,
          }),
    maxResponseBytes: config.GRAPHQL_MAX_RESPONSE_BYTES,
    metrics: config.METRICS_ENABLED,
  });

  const SUBSCRIPTIONS = [OperationTypeNode.SUBSCRIPTION];
  const QUERIES = [OperationTypeNode.QUERY];
  const BOTH = [OperationTypeNode.QUERY, OperationTypeNode.SUBSCRIPTION];
  async function run(
    request: OperationRequest,
    kinds: readonly OperationTypeNode[],
    ready?: () => Promise<boolean>,
  ): Promise<EventResults | FormattedResult> {
    const op = await pipeline.run(
      new Operation<StreamCaller, EventsContext>(request, { headers: request.headers, ready }, schema, kinds, logger),
    );
    return op.stream ? (op.stream as EventResults) : op.answer;
  }

  const handler = createHandler({
    schema,
    // Distinct connections only: every stream is one request with its own token.
    authenticate: () => null,
    onSubscribe: async (req, params) => {
      const request = {
        query: params.query,
        variables: params.variables ?? undefined,
        operationName: params.operationName ?? undefined,
        headers: req.raw.headers,
      };
      const result = await run(request, BOTH, writeGate(req.context.res, stallMs));
      if (Symbol.asyncIterator in result) return result as AsyncGenerator<ExecutionResult>;
      if (result.data) return result as ExecutionResult;
      // Errors before the stream starts are plain HTTP errors with the GraphQL error body.
      return refusedBeforeStream(result);
    },
  });

  const router = express.Router();
  router.use('/graphql/stream', distinctConnectionsOnly, jsonBody(config, config.BODY_LIMIT_BYTES), (req, res) => {
    // A browser's EventSource cannot send a header: its ticket comes in the URL.
    if (typeof req.query.ticket === 'string') req.headers[STREAM_TICKET_HEADER] = req.query.ticket;
    handler(req, res).catch((err) => {
      logger.error({ err }, 'graphql-sse handler failed');
      if (!res.headersSent)
        res.status(500).json({ errors: [{ message: 'internal error', extensions: { code: 'internal_error' } }] });
    });
  });
  return {
    router,
    subscribe: (request) => run(request, SUBSCRIPTIONS),
    query: (request) => run(request, QUERIES) as Promise<FormattedResult>,
    schema,
  };
}
