// The Apollo gateway: composes whatever subgraphs it is handed and serves the supergraph.
// It knows no particular subgraph: the entry point passes the list.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import type { SupergraphSdlHook } from '@apollo/gateway';
import { ApolloServer, HeaderMap } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import express, { NextFunction, Request, Response, Router } from 'express';
import { printSubgraphSchema } from '@apollo/subgraph';
import { GraphQLFormattedError, GraphQLSchema } from 'graphql';
import type { Config } from '../lib/config';
import { AppError } from '../lib/errors';
import { graphqlBodyError, normalizeError } from '../lib/graphql-errors';
import { clientAddress, HopSecret } from '../lib/hop';
import type { Logger } from '../lib/logger';
import { Operation, operationLimits } from '../lib/operation-pipeline';
import { headerValue, Headers, requestIdFrom } from '../lib/request-context';
import type { RunningSubgraph } from '../lib/subgraph';
import { KeyMaterial, TokenVerifier } from '../lib/tokens';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { withSchemaBeside, ServedBeside } from './beside';
import { composeSupergraph, fetchSubgraphSdl, SubgraphSdl } from './compose';
import { explorer } from './explorer';
import { asksForLegacyJson, httpStatusPlugin } from './http-status';
import { GatewayContext, HttpDataSource, InProcessDataSource } from './data-sources';
import { apolloGateway, pipelinePlugin } from './apollo-adapter';
import { DIRECT_KINDS, directExecution } from './direct-execution';

/** A subgraph in this process, or one reached over HTTP at its GraphQL URL. */
export type SubgraphEndpoint = { name: string; local: RunningSubgraph } | { name: string; url: string };

export interface GatewayOptions {
  config: Config;
  logger: Logger;
  keys: KeyMaterial;
  subgraphs: SubgraphEndpoint[];
  /**
   * A supergraph file composed ahead of time (`npm run compose`), watched and reloaded when it
   * changes. Without it the gateway composes the subgraphs it is handed at start.
   */
  supergraphPath?: string;
  /** What is served beside the supergraph (the event stream's schema), shown in /graphql's schema too. */
  beside?: ServedBeside;
}

export interface OperationRequest {
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  headers: Headers;
  clientIp: string;
}

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
}

import type { Checks, CheckState, ReadinessReport } from '../lib/http-app';
export type { Checks };

export interface Gateway {
  /** Runs one operation as if it had arrived over HTTP (one-process mode, no network hop). */
  execute(request: OperationRequest): Promise<OperationResult>;
  /** POST /graphql (and GET for the landing page is disabled). */
  router: Router;
  checks(): Promise<Checks>;
  /** The checks, with the figures the subgraphs give (e.g. `details.synthesis`). */
  readiness(): Promise<ReadinessReport>;
  stop(): Promise<void>;
}

const LOCAL_URL = (name: string) => `http://in-process.invalid/${name}`;

async function subgraphSdls(subgraphs: SubgraphEndpoint[], hopSecret: string | undefined): Promise<SubgraphSdl[]> {
  return Promise.all(
    subgraphs.map((s) =>
      'local' in s
        ? { name: s.name, url: LOCAL_URL(s.name), sdl: printSubgraphSchema(s.local.schema) }
        : fetchSubgraphSdl(s.name, s.url, hopSecret),
    ),
  );
}

async function remoteReadiness(url: string): Promise<ReadinessReport> {
  try {
    const res = await fetch(new URL('/health/ready', url), { signal: AbortSignal.timeout(2000) });
    const body = (await res.json().catch(() => ({}))) as Partial<ReadinessReport>;
    if (!res.ok) return { checks: { database: 'down' } };
    return { checks: { database: 'up', ...(body.checks ?? {}) }, details: body.details };
  } catch {
    return { checks: { database: 'down' } };
  }
}

/**
 * The supergraph from a file, and again whenever the file changes (compose writes it by
 * rename, so a poll never sees half a file). A file that does not load leaves the running
 * supergraph in place.
 */
function watchedSupergraph(file: string, logger: Logger, check: (sdl: string) => void): SupergraphSdlHook {
  return async ({ update }) => {
    let current = fs.readFileSync(file, 'utf8');
    check(current);
    const reload = () => {
      let next: string;
      try {
        next = fs.readFileSync(file, 'utf8');
      } catch (err) {
        return logger.error({ err, file }, 'supergraph file unreadable; keeping the loaded one');
      }
      if (next === current) return;
      try {
        check(next);
        update(next);
        current = next;
        logger.info({ file }, 'supergraph reloaded');
      } catch (err) {
        logger.error({ err, file }, 'supergraph file rejected; keeping the loaded one');
      }
    };
    fs.watchFile(file, { interval: SUPERGRAPH_POLL_MS }, reload);
    return { supergraphSdl: current, cleanup: async () => fs.unwatchFile(file, reload) };
  };
}

const SUPERGRAPH_POLL_MS = 500;

/** GET /graphql?query=…&variables=<JSON>: what Apollo would read, for the limits. */
function fromQueryString(query: Record<string, unknown>) {
  let variables: unknown;
  try {
    variables = typeof query.variables === 'string' ? JSON.parse(query.variables) : undefined;
  } catch {
    variables = undefined; // Apollo answers bad JSON itself
  }
  return { query: query.query, operationName: query.operationName, variables };
}

/** The subgraph names a supergraph SDL joins (`enum join__Graph { AUTH @join__graph(name: "auth", …) }`). */
export function supergraphSubgraphNames(sdl: string): string[] {
  return [...sdl.matchAll(/@join__graph\(\s*name:\s*"([^"]+)"/g)].map((m) => m[1]);
}

/**
 * Every subgraph the supergraph names must have an address here: the file's own URLs are
 * placeholders (one file serves every deployment), never to be contacted.
 */
function checkAddresses(sdl: string, file: string, known: Set<string>): void {
  const missing = supergraphSubgraphNames(sdl).filter((name) => !known.has(name));
  if (missing.length) {
    throw new Error(
      `the supergraph ${file} names the subgraph${missing.length > 1 ? 's' : ''} ${missing.join(', ')} that SUBGRAPH_URLS does not give; add ${missing.map((n) => `${n}=http://…/graphql`).join(',')}`,
    );
  }
}

// Operation ids: unguessable across processes and restarts, and cheap (no random bytes per operation).
const OPERATION_ID_PREFIX = `${randomUUID()}.`;
let operations = 0;

/**
 * The gateway's context of one request. Its logger is made when first used (errors): a child
 * logger per request was a cost of its own. A getter on the prototype, because Apollo copies the
 * context's own properties (which would call a getter of the object itself) for each operation.
 */
class RequestContext implements GatewayContext {
  private requestLogger?: Logger;
  /** Carried by each of this operation's subgraph requests: budgets per operation (lib/operation-budget.ts). */
  readonly operationId = `${OPERATION_ID_PREFIX}${(++operations).toString(36)}`;

  constructor(
    readonly requestId: string,
    readonly clientIp: string,
    readonly authorization: string | undefined,
    readonly principal: GatewayContext['principal'],
    readonly userAgent: string | undefined,
    private readonly processLogger: Logger,
  ) {}

  get logger(): Logger {
    return (this.requestLogger ??= this.processLogger.child({ requestId: this.requestId }));
  }
}

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger, subgraphs } = options;
  const byName = new Map(subgraphs.map((s) => [s.name, s]));
  const file = options.supergraphPath;
  if (file) checkAddresses(fs.readFileSync(file, 'utf8'), file, new Set(byName.keys())); // before anything starts
  const supergraphSdl = file
    ? watchedSupergraph(file, logger, (sdl) => checkAddresses(sdl, file, new Set(byName.keys())))
    : composeSupergraph(await subgraphSdls(subgraphs, config.SUBGRAPH_SECRET));
  const verifier = new TokenVerifier(options.keys, options.config.JWT_ISSUER);

  // Apollo's gateway sends usage metrics to Apollo's servers unless told not to; this service
  // calls no one outside its own deployment.
  process.env.APOLLO_TELEMETRY_DISABLED = 'true';
  const hop = new HopSecret(config.SUBGRAPH_SECRET);
  const {
    gateway,
    plans,
    served: fast,
  } = apolloGateway({
    supergraphSdl,
    buildService: ({ name }) => {
      const endpoint = byName.get(name);
      // Checked before: a supergraph naming an unknown subgraph is refused (checkAddresses).
      if (!endpoint) throw new Error(`no address for the subgraph ${name} (SUBGRAPH_URLS)`);
      if ('local' in endpoint) return new InProcessDataSource(endpoint.local);
      // Addresses come from configuration, so one supergraph file serves every deployment.
      return new HttpDataSource(name, endpoint.url, config.SUBGRAPH_SECRET);
    },
  });
  // The API schema, for the operation limits (checked before Apollo validates and plans).
  let apiSchema: GraphQLSchema | undefined;
  const served = options.beside ? withSchemaBeside(fast, options.beside) : fast;
  served.onSchemaLoadOrUpdate(({ apiSchema: next }) => (apiSchema = next));

  /** The gateway's own check of the token; subgraphs across HTTP check it again, in-process ones take its principal. */
  async function contextFor(headers: Headers, clientIp: string): Promise<GatewayContext> {
    const requestId = requestIdFrom(headers);
    const authorization = headerValue(headers, 'authorization');
    let principal: GatewayContext['principal'];
    try {
      principal = authorization ? await verifier.verifyRequest({ headers: { authorization } }) : undefined;
    } catch (err) {
      throw err instanceof AppError ? err : new AppError('unauthorized');
    }
    return new RequestContext(
      requestId,
      clientIp,
      authorization,
      principal,
      headerValue(headers, 'user-agent'),
      logger,
    );
  }

  // Before the gateway loads, so that it hears of the first schema. The one operation pipeline:
  // the direct path runs all of it; Apollo Server runs its steps through ./apollo-adapter.ts.
  const direct = directExecution(gateway, {
    logger,
    metrics: config.METRICS_ENABLED,
    maxResponseBytes: config.GRAPHQL_MAX_RESPONSE_BYTES,
    plans,
    limits: operationLimits(config),
    contextFor,
  });
  const limitsStep = direct.pipeline.steps.find((s) => s.name === 'limits')!;

  const apollo = new ApolloServer<GatewayContext>({
    gateway: served,
    // The pipeline's error step, with what Apollo knows of the error (its code for parse and validation errors).
    formatError: (formatted, error) => normalizeError(formatted, error, logger),
    includeStacktraceInErrorResponses: false,
    introspection: config.introspection,
    // "Did you mean …?" in validation errors reveals the schema as well as introspection does.
    hideSchemaDetailsFromClientErrors: !config.introspection,
    plugins: [
      // Apollo's landing page loads Apollo Sandbox from Apollo's CDN; the explorer here is local (./explorer.ts).
      ApolloServerPluginLandingPageDisabled(),
      // The pipeline's answer-size cap and metric.
      pipelinePlugin(direct.pipeline as never, DIRECT_KINDS, logger),
      // After the cap, so that it sees the cap's error.
      httpStatusPlugin(),
    ],
    // Shutdown is ours (lib/http-server.ts): Apollo's own signal handler would race it.
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  /** The pipeline's first step on a request to /graphql: its refusal, already answered; undefined when it may go on. */
  function refusal(input: { query: unknown; variables?: unknown; operationName?: unknown }, headers: Headers) {
    if (!apiSchema || typeof input.query !== 'string') return undefined;
    const request = {
      query: input.query,
      variables: input.variables as Record<string, unknown> | undefined,
      operationName: input.operationName as string | undefined,
    };
    const op = new Operation<{ headers: Headers; clientIp: string }, GatewayContext>(
      request,
      { headers, clientIp: '' },
      apiSchema,
      DIRECT_KINDS,
      logger,
    );
    limitsStep.before!(op as never);
    if (!op.result) return undefined;
    direct.pipeline.finish(op);
    return op.answer;
  }

  const router = express.Router();
  if (options.config.graphqlExplorer) router.use(explorer());
  router.use(
    '/graphql',
    express.json({ limit: config.BODY_LIMIT_BYTES }),
    (req: Request, res: Response, next: NextFunction) => {
      const input = req.method === 'GET' ? fromQueryString(req.query) : req.body;
      // Batches are refused by Apollo (allowBatchedHttpRequests is off).
      if (!input || typeof input !== 'object' || Array.isArray(input)) return next();
      // A token that turns out invalid is refused (401) before Apollo parses anything.
      const refused = refusal(input, req.headers);
      if (!refused) return next();
      // The statuses and media types Apollo would use for a request error (./http-status.ts).
      const accept = req.headers.accept;
      const legacy = asksForLegacyJson(accept);
      const type =
        !legacy && accept && /application\/graphql-response\+json/i.test(accept)
          ? 'application/graphql-response+json; charset=utf-8'
          : 'application/json; charset=utf-8';
      res
        .status(legacy ? 200 : 400)
        .type(type)
        .send(JSON.stringify(refused));
    },
    expressMiddleware(apollo, {
      context: async ({ req }) => {
        try {
          return await contextFor(req.headers, clientAddress(req, hop));
        } catch (err) {
          // Apollo answers a context failure with this error and its HTTP status.
          const e = err instanceof AppError ? err : new AppError('unauthorized');
          e.extensions.http = { status: 401, headers: new HeaderMap([['www-authenticate', 'Bearer']]) };
          throw e;
        }
      },
    }),
  );

  router.use('/graphql', graphqlBodyError);

  /**
   * A subgraph is `up` when it answers and its database does. The subgraphs' own checks
   * (`synthesis: degraded`, …) are passed on by name, the worst state of any subgraph winning,
   * with their figures: the gateway knows no particular subgraph.
   */
  async function readiness(): Promise<ReadinessReport> {
    const reports = await Promise.all(
      subgraphs.map((s) => ('local' in s ? s.local.readiness() : remoteReadiness(s.url))),
    );
    const rank: Record<CheckState, number> = { up: 0, degraded: 1, down: 2 };
    const checks: Checks = {};
    const details: Record<string, unknown> = {};
    reports.forEach((report, i) => {
      const { database, ...own } = report.checks;
      checks[subgraphs[i].name] = database === 'up' ? 'up' : 'down';
      for (const [name, state] of Object.entries(own))
        if (!checks[name] || rank[state] > rank[checks[name]]) checks[name] = state;
      Object.assign(details, report.details);
    });
    const database: CheckState = subgraphs.every((s) => checks[s.name] === 'up') ? 'up' : 'down';
    return { checks: { database, ...checks }, ...(Object.keys(details).length ? { details } : {}) };
  }

  return {
    router,
    execute: ({ query, variables, operationName, headers, clientIp }) =>
      direct.run({ query, variables, operationName }, { headers, clientIp }),
    checks: () => readiness().then((r) => r.checks),
    readiness,
    async stop() {
      await apollo.stop();
    },
  };
}
