// Operations whose query plan is one fetch from one subgraph go to it as planned, past the
// gateway's executor (gateway/single-fetch.ts): the same answers and errors as the executor's,
// and every other plan still through the executor.
import { ApolloGateway } from '@apollo/gateway';
import { printSubgraphSchema } from '@apollo/subgraph';
import { buildSchema, GraphQLSchema, parse } from 'graphql';
import { apolloGateway } from '../../gateway/apollo-adapter';
import { composeSupergraph } from '../../gateway/compose';
import { GatewayContext, InProcessDataSource } from '../../gateway/data-sources';
import { directExecution } from '../../gateway/direct-execution';
import { SingleFetchPlans, withSingleFetches } from '../../gateway/single-fetch';
import { loadConfig } from '../../lib/config';
import { EventLog } from '../../lib/event-log';
import { createLogger } from '../../lib/logger';
import { RunningSubgraph, startSubgraph } from '../../lib/subgraph';
import { loadKeys } from '../../lib/tokens';
import { selectSubgraphs } from '../../subgraphs';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';
describe('plans of one fetch from one subgraph: sent to it as planned, past the executor', () => {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    ...isolatedEnv(),
  });
  const logger = createLogger(config);
  let log: EventLog;
  const subgraphs: RunningSubgraph[] = [];
  let gateway: ApolloGateway;
  let direct: ReturnType<typeof directExecution>;
  let executed: string[] = []; // the operations the gateway's executor ran
  let token: string;

  beforeAll(async () => {
    const keys = loadKeys(config);
    log = await EventLog.open(config, logger);
    for (const def of await selectSubgraphs(['auth', 'tts']))
      subgraphs.push(await startSubgraph(def, { config, logger, keys, events: log }));
    // The gateway as the service builds it (gateway/apollo-adapter.ts): the supergraph without the
    // security links' `for: SECURITY`, which Apollo Gateway refuses, and the plans it reports.
    let plans: SingleFetchPlans;
    ({ gateway, plans } = apolloGateway({
      supergraphSdl: composeSupergraph(
        subgraphs.map((s) => ({ name: s.name, url: `http://${s.name}.invalid`, sdl: printSubgraphSchema(s.schema) })),
      ),
      buildService: ({ name }) => new InProcessDataSource(subgraphs.find((s) => s.name === name)!),
    }));
    direct = directExecution(gateway, { logger, metrics: true, maxResponseBytes: 1 << 20, plans });
    await gateway.load();
    const executor = gateway.executor;
    gateway.executor = (requestContext) => (executed.push(requestContext.request.query!), executor(requestContext));
    const login = await run(
      'mutation { login(username: "admin", password: "' + ADMIN.password + '") { accessToken } }',
    );
    token = (login.data as any).login.accessToken;
  });
  afterAll(async () => {
    await gateway?.stop();
    for (const s of subgraphs) await s.stop();
    await log?.close();
    await cleanupDatabases(config);
  });
  beforeEach(() => (executed = []));

  const run = (query: string, authorization?: string) =>
    direct.execute(
      query,
      {},
      { requestId: 'r1', clientIp: '127.0.0.1', authorization: authorization && `Bearer ${authorization}`, logger },
    );

  it('runs the executor the first time only, and answers the same both ways', async () => {
    const query = 'query Mine { result: currentSession { session_id: id state } me { username roles } }';
    const first = await run(query, token);
    const second = await run(query, token);
    expect(first.errors).toBeUndefined();
    expect(first.data).toMatchObject({ result: { state: 'active' }, me: { username: 'admin' } });
    expect(second).toEqual(first);
    expect(executed).toEqual([query]);
  });

  it("passes a subgraph's errors on as the executor does", async () => {
    const query = '{ currentSession { id } }';
    const first = await run(query);
    const second = await run(query);
    expect(first.errors).toEqual([expect.objectContaining({ extensions: { code: 'unauthorized' } })]);
    expect(second).toEqual(first);
    expect(executed).toEqual([query]);
  });

  it('sends only the variables the fetch uses, as the executor does', async () => {
    const query = 'query V($id: ID!) { session(id: $id) { id } }';
    const variables = { id: '00000000-0000-0000-0000-000000000000' };
    const answers = [];
    for (let i = 0; i < 2; i++)
      answers.push(
        await direct.execute(query, variables, {
          requestId: 'r1',
          clientIp: '127.0.0.1',
          authorization: `Bearer ${token}`,
          logger,
        }),
      );
    expect(answers[0].errors).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'not_found' }) }),
    ]);
    expect(answers[1]).toEqual(answers[0]);
    expect(executed).toEqual([query]);
    // A variable that does not fit is refused before any fetch, as the executor refuses it: no
    // data at all (over HTTP a 400), where a subgraph's refusal would come back with data: null.
    const refused = await direct.execute(
      query,
      { id: ['not', 'an', 'id'] },
      { requestId: 'r1', clientIp: '127.0.0.1', authorization: `Bearer ${token}`, logger },
    );
    expect(refused).toEqual({
      data: undefined,
      errors: [
        expect.objectContaining({
          message: expect.stringContaining('$id'),
          locations: expect.any(Array),
          extensions: { code: 'validation_error' },
        }),
      ],
    });
    expect(executed).toEqual([query]);
  });

  it("leaves plans across subgraphs, answers with __typename and the gateway's own root fields to the executor every time", async () => {
    const across = '{ voices(first: 1) { items { id owner { username } } } }';
    const typename = '{ me { __typename username } }';
    // The gateway answers these root fields itself; the subgraph is not asked for them.
    const rootTypename = '{ __typename me { username } }';
    const introspection = '{ __type(name: "User") { name } me { username } }';
    for (const query of [across, typename, rootTypename, introspection]) {
      const first = await run(query, token);
      expect(first.errors).toBeUndefined();
      expect(await run(query, token)).toEqual(first);
    }
    expect((await run(typename, token)).data).toEqual({ me: { __typename: 'User', username: 'admin' } });
    expect((await run(rootTypename, token)).data).toEqual({ __typename: 'Query', me: { username: 'admin' } });
    expect(executed).toEqual([
      across,
      across,
      typename,
      typename,
      rootTypename,
      rootTypename,
      introspection,
      introspection,
      typename,
      rootTypename,
    ]);
  });
});

/**
 * A gateway whose executor reports each operation's plan as a single fetch from subgraph `a`
 * (an operation named `Across` as a plan of two fetches), and answers it itself.
 */
function fakeGateway(coreSupergraphSdl: string) {
  const apiSchema = buildSchema('type Query { ping: String }');
  const plans = new SingleFetchPlans();
  const dataSource = {
    process: jest.fn(async () => ({
      data: { ping: 'from the subgraph' },
      errors: [{ message: 'partial', path: ['ping'], extensions: { code: 'not_found' } }],
    })),
  };
  const executor = jest.fn(async (requestContext: any) => {
    const fetch = {
      kind: 'Fetch',
      serviceName: 'a',
      operation: '{ping}',
      operationName: undefined,
      operationKind: 'query',
    };
    const node =
      requestContext.operation.name?.value === 'Across' ? { kind: 'Sequence', nodes: [fetch, fetch] } : fetch;
    plans.record({ queryPlan: { kind: 'QueryPlan', node }, serviceMap: { a: dataSource }, requestContext } as any);
    return { data: { ping: 'from the executor' } };
  });
  const gateway = {
    onSchemaLoadOrUpdate: (listener: (s: { apiSchema: GraphQLSchema; coreSupergraphSdl: string }) => void) =>
      listener({ apiSchema, coreSupergraphSdl }),
    load: async () => ({ schema: apiSchema, executor }),
    stop: async () => undefined,
    executor,
  };
  plans.follow(gateway as unknown as ApolloGateway);
  return { gateway, plans, dataSource, executor };
}

describe('a supergraph with @inaccessible', () => {
  it('sends every operation through the executor (it removes inaccessible values from answers)', async () => {
    const { gateway, plans, dataSource, executor } = fakeGateway(
      'type Query { ping: String @join__field(graph: A) secret: String @inaccessible }',
    );
    const direct = directExecution(gateway as unknown as ApolloGateway, {
      logger: createLogger({ LOG_LEVEL: 'silent' }),
      metrics: false,
      maxResponseBytes: 1 << 20,
      plans,
    });
    const context: GatewayContext = {
      requestId: 'r1',
      clientIp: '127.0.0.1',
      logger: createLogger({ LOG_LEVEL: 'silent' }),
    };
    for (let i = 0; i < 3; i++)
      expect(await direct.execute('{ ping }', undefined, context)).toEqual({ data: { ping: 'from the executor' } });
    expect(executor).toHaveBeenCalledTimes(3);
    expect(dataSource.process).not.toHaveBeenCalled();
  });
});

describe('for Apollo Server (/graphql)', () => {
  it("the gateway's executor sends a single fetch straight once it knows the plan, its errors as the executor makes them", async () => {
    const { gateway, dataSource, plans, executor } = fakeGateway('type Query { ping: String @join__field(graph: A) }');
    const loaded = await withSingleFetches(gateway as never, plans).load({} as never);
    const requestContext = {
      document: { kind: 'Document', definitions: [] },
      operation: { kind: 'OperationDefinition', selectionSet: { selections: [] } },
      request: { query: '{ ping }' },
      context: {},
    } as any;
    expect(await loaded.executor!(requestContext)).toEqual({ data: { ping: 'from the executor' } });
    const second = await loaded.executor!(requestContext);
    expect(second.data).toEqual({ ping: 'from the subgraph' });
    // A GraphQLError naming the subgraph, as Apollo Server takes errors from an executor.
    expect(second.errors?.map((e) => e.toJSON())).toEqual([
      { message: 'partial', path: ['ping'], extensions: { code: 'not_found', serviceName: 'a' } },
    ]);
    expect(executor).toHaveBeenCalledTimes(1);
    expect(dataSource.process).toHaveBeenCalledTimes(1);
  });

  it('a fetch that throws (the subgraph unreachable) is an error of the operation, as from the executor', async () => {
    const { gateway, dataSource, plans } = fakeGateway('type Query { ping: String @join__field(graph: A) }');
    const loaded = await withSingleFetches(gateway as never, plans).load({} as never);
    const requestContext = {
      document: { kind: 'Document', definitions: [] },
      operation: { kind: 'OperationDefinition', selectionSet: { selections: [] } },
      request: { query: '{ ping }' },
      context: {},
    } as any;
    await loaded.executor!(requestContext);
    dataSource.process.mockRejectedValueOnce(
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4001'), { code: 'ECONNREFUSED' }),
    );
    const answer = await loaded.executor!(requestContext);
    expect(answer.data).toBeNull();
    expect(answer.errors?.map((e) => e.toJSON())).toEqual([
      {
        message: 'connect ECONNREFUSED 127.0.0.1:4001',
        extensions: { code: 'DOWNSTREAM_SERVICE_ERROR', serviceName: 'a' },
      },
    ]);
    expect(answer.errors![0].originalError).toMatchObject({ code: 'ECONNREFUSED' }); // the error mapping reads it: 503
  });

  it('tells apart the operations of one document (Apollo Server keeps one parsed document per text)', async () => {
    const { gateway, dataSource, plans, executor } = fakeGateway('type Query { ping: String @join__field(graph: A) }');
    const loaded = await withSingleFetches(gateway as never, plans).load({} as never);
    const document = parse('query One { ping } query Across { ping }');
    const [one, across] = document.definitions;
    const run = (operation: unknown) =>
      loaded.executor!({ document, operation, request: { query: '…' }, context: {} } as any);
    for (let i = 0; i < 2; i++) {
      expect((await run(across)).data).toEqual({ ping: 'from the executor' }); // its plan is not a single fetch
      expect((await run(one)).data).toEqual({ ping: i === 0 ? 'from the executor' : 'from the subgraph' });
    }
    expect(executor).toHaveBeenCalledTimes(3);
    expect(dataSource.process).toHaveBeenCalledTimes(1);
  });
});
