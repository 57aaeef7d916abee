// What every subgraph shares: its TypeGraphQL schema turned into a Federation 2 subgraph,
// its data source, and a context whose caller is proven by a token the subgraph verified
// itself (a subgraph may be reached directly, so it never trusts a forwarded claim).
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { printSchemaWithDirectives } from '@graphql-tools/utils';
import {
  execute,
  FieldNode,
  GraphQLError,
  GraphQLFormattedError,
  GraphQLObjectType,
  GraphQLSchema,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  Kind,
  NoSchemaIntrospectionCustomRule,
  OperationDefinitionNode,
  OperationTypeNode,
  parse,
  ValidationContext,
  ValidationRule,
  valueFromAST,
} from 'graphql';
import { AuthChecker, buildSchema, createResolversMap, NonEmptyArray } from 'type-graphql';
import type { DataSource } from 'typeorm';
import type { Config } from './config';
import { openDatabase } from './database/open';
import { pingDatabase } from './database/ping';
import { DocumentCache } from './document-cache';
import { AppError } from './errors';
import { isUnavailableError } from './graphql-errors';
import { EventLog, OutboxRelay } from './event-log';
import type { ReadinessReport } from './http-app';
import type { GatewayLink } from './gateway-link';
import type { Logger } from './logger';
import { Operation, operationLimits, operationPipeline, Pipeline } from './operation-pipeline';
import { expectPlainLists, withPlainLists } from './plain-lists';
import { headerValue, Headers, OPERATION_ID_HEADER, requestIdFrom } from './request-context';
import { effectiveScopes, hasBearer, KeyMaterial, Principal, scopesOfToken, TokenVerifier } from './tokens';

export interface SubgraphContext {
  principal: Principal | null;
  /**
   * The caller's scopes now: the token's as issued, or a newer change from the event log
   * (lib/revocations.ts). Set with `principal`; the pipeline's scope step checks them.
   */
  scopes?: ReadonlySet<string>;
  /** Why a presented token was refused; thrown when an operation needs a caller. */
  authError?: AppError;
  requestId: string;
  clientIp: string;
  /** The caller's User-Agent, as forwarded by each hop. */
  userAgent?: string;
  logger: Logger;
  /** Per-request memo, so one request reads a row once however many resolvers ask. */
  memo: Map<string, Promise<unknown>>;
  /** The gateway's id of the client operation this request is part of (lib/operation-budget.ts). */
  operationId?: string;
}

export interface SubgraphDeps {
  config: Config;
  dataSource: DataSource;
  logger: Logger;
  keys: KeyMaterial;
  events: EventLog;
  /** The gateway, for background work that acts as a user through other modules' operations (lib/gateway-link.ts). */
  gateway?: GatewayLink;
}

// A reference resolver declares the representation it takes (`{ id: string }`): `never` admits any such parameter.
type ReferenceResolvers = Record<string, { __resolveReference: (ref: never, ctx: SubgraphContext) => unknown }>;

export interface SubgraphParts {
  /** Resolver instances, constructed with their services. */
  resolvers: object[];
  orphanedTypes?: Function[];
  references?: ReferenceResolvers;
  /**
   * Checks beyond the signature; throws `unauthorized`. By default a token of a session whose
   * revocation is in the event log is refused (the auth subgraph checks its own table instead).
   */
  checkPrincipal?: (principal: Principal, ctx: SubgraphContext) => Promise<void>;
  start?: () => Promise<void>;
  stop?: () => Promise<void>;
  /** Readiness beyond its database (asked only while the database answers): e.g. tts's `synthesis`. */
  readiness?: () => Promise<ReadinessReport>;
}

/** Work a subgraph does in the background (rendering jobs, …), apart from answering queries. */
export interface BackgroundWork {
  stop(): Promise<void>;
}

export interface SubgraphDefinition {
  name: string;
  entities: Function[];
  migrations: Function[];
  create(deps: SubgraphDeps): Promise<SubgraphParts> | SubgraphParts;
  /** Its background work alone, for a process of its own (`npm run start:worker -- <name>`). */
  worker?(deps: SubgraphDeps): Promise<BackgroundWork> | BackgroundWork;
}

/** One GraphQL request to a subgraph, as a gateway sends it. */
export interface SubgraphRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** Its answer, errors already in this service's form (lib/graphql-errors.ts). */
export interface SubgraphAnswer {
  /** Absent when the request itself was refused (unparsable, invalid, no such operation). */
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
  /** The operation the document selected, when it was valid. */
  operation?: OperationDefinitionNode;
}

/** Who is calling: the request's headers (its token), its address, and in one process the gateway's verified principal. */
export interface SubgraphCaller {
  headers: Headers;
  clientIp: string;
  /**
   * `verified`: the principal of the same `Authorization` header, already verified by this
   * process (the gateway, in one process). It is a function argument, never a header, so no
   * remote caller can supply it; requests over HTTP are always verified here.
   */
  verified?: Principal;
}

export interface RunningSubgraph {
  name: string;
  schema: GraphQLSchema;
  dataSource: DataSource;
  createContext(caller: SubgraphCaller): Promise<SubgraphContext>;
  /**
   * Runs one request of the gateway in this process (its in-process data source): the operation
   * pipeline (lib/operation-pipeline) without the limits and the metric, which the gateway applied
   * to the client's operation.
   */
  execute(request: SubgraphRequest, caller: SubgraphCaller): Promise<SubgraphAnswer>;
  /**
   * Runs one request that came over HTTP (the subgraph process's POST /graphql): the whole
   * pipeline, limits and metric included, since anyone who reaches the port may send it.
   * `hop`: the caller presented the hop secret (lib/hop.ts).
   */
  serve(request: SubgraphRequest, caller: SubgraphCaller, hop: boolean): Promise<SubgraphAnswer>;
  ready(): Promise<boolean>;
  /** `database` and the subgraph's own checks, with their figures. */
  readiness(): Promise<ReadinessReport>;
  stop(): Promise<void>;
}

const FEDERATION_LINK =
  'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@shareable", "@external", "@requires", "@provides", "@authenticated", "@requiresScopes"])';

/**
 * type-graphql's `@Authorized()`, for a module not yet declaring its needs with lib/scopes.ts: a
 * caller with a token. What a caller may do is the scope step's business alone
 * (lib/operation-pipeline/scopes.ts); no role is checked anywhere by name.
 */
export const authChecker: AuthChecker<SubgraphContext> = ({ context }) => {
  if (!context.principal) throw context.authError ?? new AppError('unauthorized');
  return true;
};

/** A TypeGraphQL schema, printed with its directives and built as a Federation 2 subgraph. */
export async function buildFederatedSchema(
  parts: Pick<SubgraphParts, 'resolvers' | 'orphanedTypes' | 'references'>,
  maxRepresentations = Infinity,
): Promise<GraphQLSchema> {
  const instances = new Map<Function, object>(parts.resolvers.map((r) => [r.constructor, r]));
  const schema = await buildSchema({
    resolvers: [...instances.keys()] as unknown as NonEmptyArray<Function>,
    container: { get: (cls: Function) => instances.get(cls) },
    orphanedTypes: parts.orphanedTypes,
    authChecker,
    validate: { forbidUnknownValues: false },
    skipCheck: true,
  });
  const resolvers = createResolversMap(schema) as Record<string, object>;
  for (const [type, ref] of Object.entries(parts.references ?? {})) {
    resolvers[type] = { ...(resolvers[type] ?? {}), ...ref };
  }
  const subgraph = buildSubgraphSchema({
    typeDefs: parse(`${FEDERATION_LINK}\n${printSchemaWithDirectives(schema)}`),
    // type-graphql's map is of its resolver objects; Apollo's type spells each kind of entry out.
    resolvers: resolvers as GraphQLResolverMap<unknown>,
  });
  withEnumDefaultsMapped(subgraph);
  checkRepresentations(subgraph, maxRepresentations);
  return subgraph;
}

/**
 * Default values of arguments and input fields read again from the SDL, now that the resolvers
 * gave each enum its TypeScript values: buildSubgraphSchema read them while the enums' values were
 * still their names, and does not re-read them when it maps the values (a `format: SpeechFormat = WAV`
 * default reached the resolver as 'WAV', where an explicit `WAV` reaches it as 'wav').
 */
function withEnumDefaultsMapped(schema: GraphQLSchema): void {
  const types = Object.values(schema.getTypeMap()).filter((t) => !t.name.startsWith('__'));
  // Input fields first: an argument's default that is an input object takes their defaults.
  for (const type of types)
    if (isInputObjectType(type))
      for (const field of Object.values(type.getFields()))
        if (field.astNode?.defaultValue) field.defaultValue = valueFromAST(field.astNode.defaultValue, field.type);
  for (const type of types)
    if (isObjectType(type) || isInterfaceType(type))
      for (const field of Object.values(type.getFields()))
        for (const arg of field.args)
          if (arg.astNode?.defaultValue) arg.defaultValue = valueFromAST(arg.astNode.defaultValue, arg.type);
}

/**
 * `_entities` with a `__typename` this subgraph does not have is the caller's mistake: a plain
 * `validation_error`, where @apollo/subgraph throws an Error that would be masked as internal.
 * More representations than the gateway's whole cost budget (GRAPHQL_MAX_COST) cannot come from
 * an operation it admitted (each entity it fetches is at least one counted field): refused before
 * any reference resolver reads the database.
 */
function checkRepresentations(schema: GraphQLSchema, max: number): void {
  const field = schema.getQueryType()?.getFields()._entities;
  const resolve = field?.resolve;
  if (!field || !resolve) return;
  field.resolve = (source, args: { representations?: Record<string, unknown>[] }, context, info) => {
    const representations = args.representations ?? [];
    const count = representations.length;
    if (count > max) {
      throw new AppError(
        'validation_error',
        `_entities: ${count} representations exceed the limit of ${max} (GRAPHQL_MAX_COST).`,
        { limit: 'GRAPHQL_MAX_COST', max },
      );
    }
    for (const representation of representations) {
      const name = representation?.__typename;
      const type = typeof name === 'string' ? schema.getType(name) : undefined;
      if (!type || !isObjectType(type)) {
        throw new AppError('validation_error', `_entities: this subgraph has no entity type ${JSON.stringify(name)}.`, {
          representations: ['name an entity type of this subgraph in __typename'],
        });
      }
      // A representation without its key (`{"__typename":"User"}`) would reach the reference resolver without an id.
      const keys = entityKeys(type);
      if (keys.length && !keys.some((fields) => fields.every((f) => isKeyValue(representation[f])))) {
        throw new AppError(
          'validation_error',
          `_entities: a ${String(name)} representation needs its key (${keys.map((k) => k.join(' ')).join(' or ')}).`,
          {
            representations: [`give the key fields of ${String(name)}`],
          },
        );
      }
    }
    return resolve(source, args, context, info);
  };
}

const isKeyValue = (v: unknown) => (typeof v === 'string' && v.length > 0) || typeof v === 'number';

/** The top-level fields of each `@key(fields: "…")` of an entity type (nested selections are not used here). */
function entityKeys(type: GraphQLObjectType): string[][] {
  const nodes = [type.astNode, ...(type.extensionASTNodes ?? [])];
  const keys: string[][] = [];
  for (const node of nodes) {
    for (const directive of node?.directives ?? []) {
      if (directive.name.value !== 'key') continue;
      const fields = directive.arguments?.find((a) => a.name.value === 'fields')?.value;
      if (fields?.kind === Kind.STRING && !fields.value.includes('{'))
        keys.push(fields.value.split(/[\s,]+/).filter(Boolean));
    }
  }
  return keys;
}

export async function startSubgraph(
  definition: SubgraphDefinition,
  deps: { config: Config; logger: Logger; keys: KeyMaterial; events: EventLog; gateway?: GatewayLink },
): Promise<RunningSubgraph> {
  const { logger, dataSource, relay, close } = await openSubgraphData(definition, deps);
  const parts = await definition.create({ ...deps, logger, dataSource });
  const schema = await buildFederatedSchema(parts, deps.config.GRAPHQL_MAX_COST);
  const verifier = new TokenVerifier(deps.keys, deps.config.JWT_ISSUER);
  const checkPrincipal =
    parts.checkPrincipal ??
    (async (principal: Principal) => {
      if (await deps.events.sessionRevoked(principal.sessionId))
        throw new AppError('unauthorized', 'The session has ended.');
    });
  // Introspection and suggestions follow GRAPHQL_INTROSPECTION here too: a subgraph may be reached directly.
  const hideSuggestions = !deps.config.introspection;
  const rules = hideSuggestions ? [NoSchemaIntrospectionCustomRule] : [];
  const documents = new DocumentCache(schema, { rules, hideSuggestions });
  // In production, callers without the hop secret never get the federation fields (lib/hop.ts).
  const production = deps.config.NODE_ENV === 'production';
  const strangerDocuments = production
    ? new DocumentCache(schema, { rules: [...rules, NoFederationFieldsRule], hideSuggestions })
    : documents;
  await parts.start?.();
  relay.start();

  const running: RunningSubgraph = {
    name: definition.name,
    schema,
    dataSource,
    async createContext({ headers, clientIp, verified }) {
      const requestId = requestIdFrom(headers);
      let requestLogger: Logger | undefined;
      const ctx: SubgraphContext = {
        principal: null,
        requestId,
        clientIp,
        userAgent: headerValue(headers, 'user-agent'),
        // Made when first used (errors, mostly): a child logger per request was a cost of its own.
        get logger() {
          return (requestLogger ??= logger.child({ requestId }));
        },
        memo: new Map(),
        operationId: headerValue(headers, OPERATION_ID_HEADER),
      };
      if (hasBearer(headers)) {
        try {
          const principal =
            verified ??
            (await verifier.verifyRequest({ headers: { authorization: headerValue(headers, 'authorization') } }));
          await checkPrincipal(principal, ctx);
          ctx.scopes = effectiveScopes(
            principal,
            await deps.events.scopesOf(principal.userId, principal.issuedAt, scopesOfToken(principal)),
          );
          ctx.principal = principal;
        } catch (err) {
          ctx.authError = principalError(err, logger);
        }
      }
      return ctx;
    },
    execute: (request, caller) => answer(inProcess, request, { caller, hop: true }, documents),
    serve: (request, caller, hop) =>
      answer(endpoint, request, { caller, hop }, hop || !production ? documents : strangerDocuments),
    ready: () => pingDatabase(dataSource),
    async readiness() {
      if (!(await pingDatabase(dataSource))) return { checks: { database: 'down' } };
      if (!parts.readiness) return { checks: { database: 'up' } };
      try {
        const own = await parts.readiness();
        return { checks: { database: 'up', ...own.checks }, details: own.details };
      } catch (err) {
        logger.warn({ err }, 'readiness check failed');
        return { checks: { database: 'down' } };
      }
    },
    async stop() {
      await parts.stop?.();
      await close();
    },
  };

  // The operation pipeline (lib/operation-pipeline): the same steps for both ways in, the limits
  // and the metric only where a request comes over HTTP.
  type Caller = { caller: SubgraphCaller; hop: boolean; documents?: DocumentCache };
  const pipelineFor = (over: 'http' | 'process') =>
    operationPipeline<Caller, SubgraphContext>({
      limits:
        over === 'http'
          ? { limits: operationLimits(deps.config), authenticated: (op) => hasBearer(op.caller.caller.headers) }
          : undefined,
      documents: (op) => op.caller.documents,
      principal: (op) => running.createContext(op.caller.caller),
      scopes: (op) => ({ scopes: op.context?.scopes, authError: op.context?.authError }),
      execute: (op) => {
        // Resolvers may answer a list from a kept array (./plain-lists.ts), put in here afterwards.
        const context = op.context!;
        expectPlainLists(context);
        const result = execute({
          schema,
          document: op.document!,
          variableValues: op.request.variables,
          operationName: op.request.operationName,
          contextValue: context,
          hideSuggestions,
        });
        return result instanceof Promise
          ? result.then((r) => withPlainLists(context, r))
          : withPlainLists(context, result);
      },
      // In one process the gateway caps the whole answer, as one refusal of the operation.
      maxResponseBytes: over === 'http' ? deps.config.GRAPHQL_MAX_RESPONSE_BYTES : undefined,
      metrics: over === 'http' && deps.config.METRICS_ENABLED,
    });
  const inProcess = pipelineFor('process');
  const endpoint = pipelineFor('http');
  async function answer(
    p: Pipeline<Caller, SubgraphContext>,
    request: SubgraphRequest,
    caller: Caller,
    docs: DocumentCache,
  ): Promise<SubgraphAnswer> {
    caller.documents = docs;
    const op = await p.run(new Operation(request, caller, schema, SUBGRAPH_KINDS, logger));
    const { data, errors } = op.answer;
    // `data` only when execution ran: a request refused as a whole (400) has none.
    const out: SubgraphAnswer = data !== undefined ? { data, operation: op.operation } : { operation: op.operation };
    if (errors) out.errors = errors;
    return out;
  }
  return running;
}

/** What a subgraph serves: queries and mutations (subscriptions are the gateway's event stream's). */
const SUBGRAPH_KINDS = [OperationTypeNode.QUERY, OperationTypeNode.MUTATION];

/** The federation fields (`_service`, `_entities`), refused to callers without the hop secret in production. */
const FEDERATION_FIELDS = new Set(['_service', '_entities']);
const NoFederationFieldsRule: ValidationRule = (context: ValidationContext) => ({
  Field(node: FieldNode) {
    if (FEDERATION_FIELDS.has(node.name.value) && context.getParentType() === context.getSchema().getQueryType()) {
      context.reportError(
        new GraphQLError(`${node.name.value} is answered only to the gateway (the hop secret, SUBGRAPH_SECRET).`, {
          nodes: [node],
        }),
      );
    }
  },
});

/**
 * Why a presented token was not accepted. A token whose session could not be looked up (the
 * database is down) is not an invalid token: `service_unavailable`, never `unauthorized`, so
 * that clients keep their tokens through a database outage.
 */
export function principalError(err: unknown, logger?: Logger): AppError {
  if (err instanceof AppError) return err;
  if (isUnavailableError(err)) {
    logger?.warn({ err }, 'session check unavailable');
    return new AppError('service_unavailable');
  }
  logger?.error({ err }, 'session check failed');
  return new AppError('internal_error');
}

/** A subgraph's background work without its schema: a worker process of distributed mode. */
export async function startSubgraphWorker(
  definition: SubgraphDefinition,
  deps: { config: Config; logger: Logger; keys: KeyMaterial; events: EventLog },
): Promise<BackgroundWork & { name: string; ready(): Promise<boolean> }> {
  if (!definition.worker) throw new Error(`The ${definition.name} subgraph has no background work.`);
  const { logger, dataSource, relay, close } = await openSubgraphData(definition, deps);
  const work = await definition.worker({ ...deps, logger, dataSource });
  relay.start();
  return {
    name: definition.name,
    ready: () => pingDatabase(dataSource),
    async stop() {
      await work.stop();
      await close();
    },
  };
}

/** The subgraph's own database, and the relay that moves its outbox into the shared event log. */
async function openSubgraphData(
  definition: SubgraphDefinition,
  deps: { config: Config; logger: Logger; events: EventLog },
) {
  // One key per fact: a subgraph process's logger already names it.
  const logger =
    deps.logger.bindings().subgraph === definition.name
      ? deps.logger
      : deps.logger.child({ subgraph: definition.name });
  const dataSource = await openDatabase(
    deps.config,
    { name: definition.name, entities: definition.entities, migrations: definition.migrations },
    logger,
  );
  const relay = new OutboxRelay(
    definition.name,
    dataSource,
    deps.events,
    deps.config.EVENT_POLL_MS,
    logger,
    deps.config.POLL_MAX_IDLE_MS,
  );
  return {
    logger,
    dataSource,
    relay,
    // An arrow: callers take it out of the object.
    close: async () => {
      await relay.stop();
      await relay
        .drain()
        .catch((err) => logger.warn({ err }, 'outbox not fully relayed; the next start relays the rest'));
      if (dataSource.isInitialized) await dataSource.destroy();
    },
  };
}
