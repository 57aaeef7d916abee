// Pins what gateway/apollo-adapter.ts relies on in Apollo's gateway, so that an upgrade that
// changes it fails here rather than in production:
// - the executor reads no field of the request context beyond those the direct path builds;
// - Apollo Gateway still refuses a supergraph whose @authenticated / @requiresScopes links are
//   `for: SECURITY`, and loads the adapter's copy without that purpose (the directives kept);
// - `experimental_didResolveQueryPlan` is still called with each plan, in the shape that
//   gateway/single-fetch.ts reads (a single Fetch node), so a plan of one fetch skips the executor.
import { ApolloGateway, LocalGraphQLDataSource } from '@apollo/gateway';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { getOperationAST, GraphQLSchema, parse } from 'graphql';
import {
  apolloGateway,
  executeOnGateway,
  executorRequestContext,
  withoutSecurityPurpose,
} from '../../gateway/apollo-adapter';
import { composeSupergraph } from '../../gateway/compose';
import type { GatewayContext } from '../../gateway/data-sources';
import { createLogger } from '../../lib/logger';

const typeDefs = parse(`
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])
  type Query { ping: String, item(id: ID!): Item }
  type Item @key(fields: "id") { id: ID!, name: String }
`);
const subgraph = buildSubgraphSchema({
  typeDefs,
  resolvers: {
    Query: { ping: () => 'pong', item: (_: unknown, { id }: { id: string }) => ({ id, name: `item ${id}` }) },
  },
});
const logger = createLogger({ LOG_LEVEL: 'silent' });
const context: GatewayContext = { requestId: 'r1', clientIp: '127.0.0.1', logger };

describe("the Apollo adapter's hold on Apollo's gateway", () => {
  const { gateway, plans } = apolloGateway({
    supergraphSdl: composeSupergraph([{ name: 'one', url: 'http://one.invalid', sdl: printed() }]),
    buildService: () => new LocalGraphQLDataSource(subgraph),
  });
  let apiSchema: GraphQLSchema;
  let executed = 0;
  const read = new Set<string | symbol>();

  beforeAll(async () => {
    gateway.onSchemaLoadOrUpdate(({ apiSchema: s }) => (apiSchema = s));
    await gateway.load();
  });
  afterAll(() => gateway.stop());

  /** Runs `query` as the direct path does, recording which fields of the request context are read. */
  async function run(query: string) {
    const document = parse(query);
    const built = executorRequestContext(
      { request: { query, variables: {} }, document, operation: getOperationAST(document)!, context },
      apiSchema,
      logger,
    );
    const watched = new Proxy(built, {
      get(target, key, receiver) {
        read.add(key);
        return Reflect.get(target, key, receiver);
      },
    });
    const executor: typeof gateway.executor = (requestContext) => (executed++, gateway.executor(requestContext));
    return { built, result: await executeOnGateway(executor, watched, plans) };
  }

  it('the executor reads only fields of the request context that the direct path builds', async () => {
    read.clear();
    const { built, result } = await run('query Two { ping item(id: "7") { id name } }');
    expect(result).toEqual({ data: { ping: 'pong', item: { id: '7', name: 'item 7' } } });
    const builtKeys = new Set(Object.keys(built));
    const unknown = [...read].filter((k) => typeof k === 'string' && !builtKeys.has(k) && k !== 'then');
    expect(unknown).toEqual([]);
    // What it is known to need: if it stops reading these, the hand-built context can shrink.
    for (const k of ['request', 'document', 'operation', 'queryHash', 'context']) expect(read).toContain(k);
  });

  it('hears of each plan (experimental_didResolveQueryPlan): a plan of one fetch then skips the executor', async () => {
    executed = 0;
    const query = 'query One { ping }';
    expect((await run(query)).result).toEqual({ data: { ping: 'pong' } });
    expect(executed).toBe(1);
    // Parsed again, as the document cache would not: keyed by the operation node, so the same node.
    const document = parse(query);
    const operation = getOperationAST(document)!;
    const requestContext = executorRequestContext(
      { request: { query, variables: {} }, document, operation, context },
      apiSchema,
      logger,
    );
    const executor: typeof gateway.executor = (rc) => (executed++, gateway.executor(rc));
    await executeOnGateway(executor, requestContext, plans); // a new node: the executor plans it, the hook records it
    expect(executed).toBe(2);
    expect(await executeOnGateway(executor, requestContext, plans)).toEqual({ data: { ping: 'pong' } });
    expect(executed).toBe(2); // the recorded single fetch went straight to the subgraph
  });
});

describe('the supergraph Apollo Gateway is handed', () => {
  const secured = composeSupergraph([
    {
      name: 'secured',
      url: 'http://secured.invalid',
      sdl: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@authenticated", "@requiresScopes"])
        type Query { open: String @authenticated, notes: [String] @requiresScopes(scopes: [["notes:read"]]) }`,
    },
  ]);

  async function loads(supergraphSdl: string): Promise<true | string> {
    const gateway = new ApolloGateway({ supergraphSdl });
    try {
      await gateway.load();
      return true;
    } catch (err) {
      return (err as Error).message;
    } finally {
      await gateway.stop().catch(() => undefined);
    }
  }

  it('is refused with the security links as composed, and loads without their purpose, directives kept', async () => {
    expect(secured).toMatch(/requiresScopes\/v[\d.]+", for: SECURITY\)/);
    expect(await loads(secured)).toMatch(/is for: SECURITY but is unsupported/);
    const handed = withoutSecurityPurpose(secured);
    expect(handed).not.toMatch(/for: SECURITY/);
    expect(handed).toMatch(/@requiresScopes\(scopes: \[\["notes:read"\]\]\)/);
    expect(handed).toMatch(/open: String[^\n]*@authenticated/);
    expect(await loads(handed)).toBe(true);
  });
});

function printed(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { printSubgraphSchema } = require('@apollo/subgraph') as typeof import('@apollo/subgraph');
  return printSubgraphSchema(subgraph);
}
