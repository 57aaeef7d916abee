// The event stream as GraphQL: `subscription { events(after, types, scope) }` over
// GraphQL-over-SSE (graphql-sse) at /graphql/stream. Apollo's gateway does not federate
// subscriptions, so this small schema is served beside it, on the event log that every
// subgraph's outbox feeds. The REST facade's /api/v1/events is a bridge onto it.
import type { ServerResponse } from 'node:http';
import express, { NextFunction, Request, Response, Router } from 'express';
import {
  createSourceEventStream,
  DocumentNode,
  execute,
  ExecutionResult,
  getOperationAST,
  GraphQLSchema,
  OperationTypeNode,
} from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import { createHandler } from 'graphql-sse/lib/use/express';
import {
  Arg,
  Authorized,
  buildSchema,
  Field,
  ID,
  ObjectType,
  Query,
  registerEnumType,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import { AppError, ERROR_STATUS, isErrorCode } from '../lib/errors';
import type { Config } from '../lib/config';
import { EventLog, startPruning } from '../lib/event-log';
import { EventStream, StreamEvent } from '../lib/event-stream';
import { errorResult } from '../lib/graphql-errors';
import { sendJson } from '../lib/http-app';
import type { Logger } from '../lib/logger';
import { headerValue, Headers, STREAM_TICKET_HEADER } from '../lib/request-context';
import { authChecker } from '../lib/subgraph';
import { DocumentCache } from '../lib/document-cache';
import {
  FormattedResult,
  Operation,
  operationLimits,
  operationPipeline,
  OperationResult,
} from '../lib/operation-pipeline';
import type { Principal, TokenVerifier } from '../lib/tokens';

export enum EventScope {
  own = 'own',
  all = 'all',
}
registerEnumType(EventScope, { name: 'EventScope', description: "`all` (every user's events) is for admins." });

@ObjectType('Event', { description: 'Something that happened, as written with the change that caused it.' })
class EventType {
  @Field(() => ID, { description: 'Position in the stream; pass as `after` to resume after it.' }) seq!: string;
  @Field(() => ID) eventId!: string;
  @Field({ description: 'session.created, voice.deleted, …' }) type!: string;
  @Field(() => ID, { description: 'The resource the event is about.' }) resourceId!: string;
  @Field(() => ID, { description: 'Whose stream the event belongs to.' }) userId!: string;
  @Field() occurredAt!: Date;
  @Field(() => GraphQLJSONObject, { description: "The resource's useful fields." }) data!: Record<string, unknown>;
}

interface EventsContext {
  principal: Principal;
  stream: EventStream;
}

/** `after` is a sequence number given back as an ID. */
function position(after: unknown): number | undefined {
  if (after === undefined || after === null) return undefined;
  if (typeof after !== 'string' || !/^\d{1,15}$/.test(after))
    throw new AppError('validation_error', 'after must be a stream position (seq).', {
      after: ['is not a stream position'],
    });
  return Number(after);
}

@Resolver()
class EventsResolver {
  constructor(private readonly log: EventLog) {}

  @Authorized()
  @Query(() => ID, { description: 'The newest position of the event stream.' })
  async eventStreamPosition(): Promise<string> {
    return String((await this.log.position()).lastSeq);
  }

  @Subscription(() => EventType, {
    description:
      "The caller's events as they happen, after `after` when given (no gap, no duplicate), filtered by `types`. " +
      "Ends when the caller's session is revoked; `resync_required` when `after` is older than what is kept.",
    subscribe: async ({ args, context }: { args: Record<string, any>; context: EventsContext }) => {
      const { principal, stream } = context;
      const after = position(args.after);
      if (args.scope === EventScope.all && !principal.roles.includes('admin'))
        throw new AppError('forbidden', "Only admins may follow every user's events.");
      await stream.checkResumable(after);
      return stream.subscribe({
        userId: args.scope === EventScope.all ? null : principal.userId,
        after,
        types: args.types ?? undefined,
        endAfter: (e) => e.type === 'session.revoked' && e.resourceId === principal.sessionId,
      });
    },
  })
  events(
    @Root() event: StreamEvent,
    @Arg('after', () => ID, { nullable: true }) _after?: string,
    @Arg('types', () => [String], { nullable: true }) _types?: string[],
    @Arg('scope', () => EventScope, { defaultValue: EventScope.own }) _scope?: EventScope,
  ): EventType {
    return { ...event, seq: String(event.seq) };
  }
}

export interface MapOptions {
  /** When the caller's access token expires: the stream then ends with a last error result. */
  expiresAt: Date;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
  /** Waits until the reader has taken what it was given; false: it stopped reading (end the stream). */
  ready?: () => Promise<boolean>;
}

const tokenExpired = (): FormattedResult =>
  errorResult(
    new AppError(
      'unauthorized',
      'The access token has expired: reconnect with a fresh token (and your last position to resume).',
    ),
  );

/**
 * The results of a source stream; return() reaches the source at once (it may be waiting). It
 * ends when the caller's token expires (with an error result saying so) and when the reader
 * stops taking results (the source then stops being pulled, so nothing piles up here).
 */
function mapEvents(
  source: AsyncGenerator<StreamEvent>,
  map: (event: StreamEvent) => Promise<ExecutionResult>,
  options: MapOptions,
): AsyncGenerator<EventResult> {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(
      () => resolve('expired'),
      Math.max(0, Math.min(options.expiresAt.getTime() - Date.now(), 2 ** 31 - 1)),
    );
  });
  const end = async (): Promise<IteratorResult<EventResult>> => {
    if (!done) {
      done = true;
      clearTimeout(timer);
      options.onEnd();
    }
    await source.return(undefined);
    return { done: true, value: undefined };
  };
  const mapped = {
    async next(): Promise<IteratorResult<EventResult>> {
      if (done) return { done: true, value: undefined };
      if (options.ready && !(await options.ready())) return end();
      const item = await Promise.race([source.next(), expired]);
      if (item === 'expired') {
        await end();
        return { done: false, value: tokenExpired() };
      }
      if (item.done) return end();
      return { done: false, value: await map(item.value) };
    },
    return: end,
    async throw(err: unknown): Promise<IteratorResult<EventResult>> {
      await end();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return mapped;
    },
  };
  return mapped as unknown as AsyncGenerator<EventResult>;
}

export interface OperationRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers: Headers;
}

/** A subscription's results: event results, and a last error result when the token expires. */
export type EventResult = ExecutionResult | FormattedResult;
export type EventResults = AsyncGenerator<EventResult>;

/** What the pipeline knows of a caller of the event stream. */
interface StreamCaller {
  headers: Headers;
  /** graphql-sse's back-pressure gate (writeGate), on /graphql/stream. */
  ready?: () => Promise<boolean>;
}

/** Seconds a client refused for too many streams is told to wait: streams last long. */
const STREAM_RETRY_AFTER_SECONDS = 30;

/** Results that may wait in graphql-sse's queue for the socket before the source is paused. */
const MAX_UNWRITTEN_RESULTS = 4;

/**
 * graphql-sse pulls results as fast as they come and queues what the socket has not taken.
 * This gate counts the result frames handed to the socket (write callbacks) against those
 * pulled, and makes the stream wait while too many are unwritten: a reader that takes nothing
 * for `stallMs` is cut off, as on the REST bridge, and the event stream's own bounded buffer
 * (EVENT_BUFFER_SIZE) applies meanwhile.
 */
function writeGate(res: ServerResponse, stallMs: number): () => Promise<boolean> {
  let pulled = 0;
  let written = 0;
  let wake: (() => void) | undefined;
  let closed = false;
  res.once('close', () => {
    closed = true;
    wake?.();
  });
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const callback =
      typeof rest[rest.length - 1] === 'function' ? (rest.pop() as (err?: Error | null) => void) : undefined;
    const isResult = typeof chunk === 'string' && chunk.startsWith('event: next');
    return write(chunk, ...rest, (err?: Error | null) => {
      if (isResult) written++;
      wake?.();
      callback?.(err);
    });
  }) as typeof res.write;
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<void>((resolve) => (timer = setTimeout(resolve, stallMs)));
    let timedOut = false;
    void stalled.then(() => ((timedOut = true), wake?.()));
    try {
      while (!closed && !timedOut && pulled - written >= MAX_UNWRITTEN_RESULTS) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
    }
    if (closed) return false;
    if (timedOut) {
      res.destroy(); // it stopped reading: cut it off (it resumes from its last position)
      return false;
    }
    pulled++;
    return true;
  };
}

/**
 * Only graphql-sse's distinct-connections mode is served: each operation is one request that asks
 * for `text/event-stream` and gets its own stream. Its single-connection mode (a stream reserved
 * by PUT, operations POSTed beside it) would otherwise answer an empty 404.
 */
function distinctConnectionsOnly(req: Request, res: Response, next: NextFunction) {
  if (req.method === 'OPTIONS') return next(); // CORS preflights are answered before (lib/browser.ts)
  if (req.method !== 'GET' && req.method !== 'POST') {
    res.setHeader('Allow', 'GET, POST');
    return sendJson(
      res,
      405,
      errorResult(
        new AppError(
          'method_not_allowed',
          `${req.method} is not served: /graphql/stream serves each operation on a connection of its own (POST, or GET with ?query=, and Accept: text/event-stream); single-connection mode is not served.`,
        ),
      ),
    );
  }
  const accept = req.headers.accept ?? '';
  if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)) {
    return sendJson(
      res,
      400,
      errorResult(
        new AppError(
          'validation_error',
          'Ask for the event stream with Accept: text/event-stream: /graphql/stream answers each operation as a stream of its own (GraphQL over SSE, distinct connections). Queries and mutations go to /graphql.',
        ),
      ),
    );
  }
  // graphql-sse compares the header as a whole.
  req.headers.accept = 'text/event-stream';
  next();
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
  const service = await createEventsService({ config, log, stream, verifier: options.verifier, logger });
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
}): Promise<EventsService> {
  const { config, log, stream, verifier, logger } = options;
  const limits = operationLimits(config);
  const stallMs = 2 * config.EVENT_HEARTBEAT_SECONDS * 1000;
  /** Open streams per user in this process (REST bridge and /graphql/stream alike). */
  const openStreams = new Map<string, number>();
  const resolver = new EventsResolver(log);
  const schema: GraphQLSchema = await buildSchema({
    resolvers: [EventsResolver],
    container: { get: () => resolver },
    authChecker,
    // type-graphql insists on a PubSub, but the subscription here brings its own `subscribe`
    // (the event stream), so topics are never used.
    pubSub: {
      publish: () => {
        throw new Error('events are published through the outbox, not a PubSub');
      },
      subscribe: () => {
        throw new Error('subscribe to the event stream instead');
      },
    },
  });

  /** The caller, by token or stream ticket, and only while the session has not been revoked. */
  async function principalOf(headers: Headers): Promise<Principal> {
    const ticket = headerValue(headers, STREAM_TICKET_HEADER);
    const principal =
      !headerValue(headers, 'authorization') && ticket
        ? await spend(ticket)
        : await verifier.verifyRequest({ headers });
    if (await log.sessionRevoked(principal.sessionId)) throw new AppError('unauthorized', 'The session has ended.');
    return principal;
  }

  /** A stream ticket opens one stream: the first to show it spends it, on any instance. */
  async function spend(ticket: string): Promise<Principal> {
    const principal = await verifier.verifyToken(ticket, 'stream').catch(() => {
      throw new AppError('unauthorized', 'The stream ticket is invalid or has expired; ask for a new one.');
    });
    // Remembered for 10 minutes, longer than any ticket lives (STREAM_TICKET_TTL_SECONDS ≤ 300).
    if (!(await log.spendTicket(principal.tokenId, new Date(Date.now() + 10 * 60_000)))) {
      throw new AppError('unauthorized', 'The stream ticket has been used already; ask for a new one.');
    }
    return principal;
  }

  // Documents by text, so that subscribers sending the same operation share one DocumentNode.
  // "Did you mean …?" only where the schema may be read anyway.
  const documents = new DocumentCache(schema, { hideSuggestions: !config.introspection });

  /**
   * One execution per event, operation and variables, shared by every subscriber receiving that
   * event with that operation (an Event's fields depend only on the event): with many streams
   * of one user, an event is turned into a result once, not once per stream.
   */
  const shared = new WeakMap<DocumentNode, Map<string, Promise<ExecutionResult>>>();
  function resultFor(
    document: DocumentNode,
    variables: Record<string, unknown> | null | undefined,
    event: StreamEvent,
    contextValue: EventsContext,
  ) {
    let byKey = shared.get(document);
    if (!byKey) shared.set(document, (byKey = new Map()));
    const key = `${event.seq}|${JSON.stringify(variables ?? {})}`;
    let result = byKey.get(key);
    if (!result) {
      result = Promise.resolve(
        execute({ schema, document, rootValue: event, contextValue, variableValues: variables }),
      );
      if (byKey.size >= 1000) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, result);
    }
    return result;
  }

  /** A subscription admitted by the pipeline: counted against the user's streams, then its results. */
  async function subscribe(op: Operation<StreamCaller, EventsContext>): Promise<OperationResult | void> {
    const contextValue = op.context!;
    const { principal } = contextValue;
    // Counted before anything is awaited, so that concurrent requests cannot all slip through.
    const open = openStreams.get(principal.userId) ?? 0;
    if (open >= config.EVENT_STREAMS_PER_USER) {
      return {
        errors: [
          new AppError(
            'rate_limit_exceeded',
            `At most ${config.EVENT_STREAMS_PER_USER} event streams of one user at once (EVENT_STREAMS_PER_USER); close one first.`,
            { limit: 'EVENT_STREAMS_PER_USER', max: config.EVENT_STREAMS_PER_USER },
            STREAM_RETRY_AFTER_SECONDS,
          ),
        ],
      };
    }
    openStreams.set(principal.userId, open + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (openStreams.get(principal.userId) ?? 1) - 1;
      if (n > 0) openStreams.set(principal.userId, n);
      else openStreams.delete(principal.userId);
    };
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

  // The one operation pipeline (lib/operation-pipeline): limits once, the document, the caller,
  // then a query's execution or a subscription's stream.
  const pipeline = operationPipeline<StreamCaller, EventsContext>({
    limits: {
      limits: operationLimits(config),
      authenticated: (op) => Boolean(headerValue(op.caller.headers, 'authorization')),
    },
    documents: () => documents,
    principal: async (op) => ({ principal: await principalOf(op.caller.headers), stream }),
    execute: (op) =>
      op.operation!.operation === OperationTypeNode.SUBSCRIPTION
        ? subscribe(op)
        : (execute({
            schema,
            document: op.document!,
            variableValues: op.request.variables,
            operationName: op.request.operationName,
            contextValue: op.context,
          }) as Promise<OperationResult>),
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
        query: params.query as string,
        variables: params.variables ?? undefined,
        operationName: params.operationName ?? undefined,
        headers: req.raw.headers,
      };
      const result = await run(request, BOTH, writeGate(req.context.res, stallMs));
      if (Symbol.asyncIterator in result) return result as AsyncGenerator<ExecutionResult>;
      if (result.data) return result as ExecutionResult;
      // Errors before the stream starts are plain HTTP errors with the GraphQL error body.
      const first = result.errors?.[0]?.extensions;
      const code = (first?.code ?? 'internal_error') as keyof typeof ERROR_STATUS;
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (first?.retryAfter !== undefined) headers['retry-after'] = String(first.retryAfter);
      if (code === 'unauthorized') headers['www-authenticate'] = 'Bearer';
      return [
        JSON.stringify(result),
        { status: isErrorCode(code) ? ERROR_STATUS[code] : 500, statusText: code, headers },
      ];
    },
  });

  const router = express.Router();
  router.use(
    '/graphql/stream',
    distinctConnectionsOnly,
    express.json({ limit: config.BODY_LIMIT_BYTES }),
    (req, res) => {
      // A browser's EventSource cannot send a header: its ticket comes in the URL.
      if (typeof req.query.ticket === 'string') req.headers[STREAM_TICKET_HEADER] = req.query.ticket;
      handler(req, res).catch((err) => {
        logger.error({ err }, 'graphql-sse handler failed');
        if (!res.headersSent)
          res.status(500).json({ errors: [{ message: 'internal error', extensions: { code: 'internal_error' } }] });
      });
    },
  );
  return {
    router,
    subscribe: (request) => run(request, SUBSCRIPTIONS),
    query: (request) => run(request, QUERIES) as Promise<FormattedResult>,
    schema,
  };
}
