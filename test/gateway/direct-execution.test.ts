// In one process the facade's operations skip Apollo Server's pipeline (gateway/direct-execution.ts).
// Their errors must come out as the pipeline's would: a variable value that does not fit its type
// is the caller's mistake, and a failure inside the gateway's executor is an error of the
// operation — never a rejected promise, which the facade would answer as 503 "gateway unreachable".
import { printSubgraphSchema } from '@apollo/subgraph';
import { ApolloGateway } from '@apollo/gateway';
import { buildSchema, GraphQLSchema } from 'graphql';
import { createGateway, Gateway } from '../../gateway';
import { composeSupergraph } from '../../gateway/compose';
import { GatewayContext, InProcessDataSource } from '../../gateway/data-sources';
import { directExecution, SingleFetchPlans } from '../../gateway/direct-execution';
import { loadConfig } from '../../lib/config';
import { EventLog } from '../../lib/event-log';
import { createLogger } from '../../lib/logger';
import { RunningSubgraph, startSubgraph } from '../../lib/subgraph';
import { loadKeys } from '../../lib/tokens';
import { selectSubgraphs } from '../../subgraphs';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const LOGIN = 'mutation Login($username: String!, $password: String!) { login(username: $username, password: $password) { accessToken } }';

describe('with the real gateway and the auth subgraph in-process', () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_BOOTSTRAP_USERNAME: ADMIN.username, AUTH_BOOTSTRAP_PASSWORD: ADMIN.password, ...isolatedEnv() });
  let log: EventLog;
  let auth: RunningSubgraph;
  let gateway: Gateway;

  beforeAll(async () => {
    const logger = createLogger(config);
    const keys = loadKeys(config);
    log = await EventLog.open(config, logger);
    auth = await startSubgraph(selectSubgraphs(['auth'])[0], { config, logger, keys, events: log });
    gateway = await createGateway({ config, logger, keys, subgraphs: [{ name: 'auth', local: auth }] });
  });
  afterAll(async () => {
    await gateway?.stop();
    await auth?.stop();
    await log?.close();
    await cleanupDatabases(config);
  });

  const run = (variables: Record<string, unknown>) => gateway.execute({ query: LOGIN, variables, headers: {}, clientIp: '127.0.0.1' });

  it('a variable of the wrong type is a validation_error naming the variable, as over HTTP', async () => {
    const result = await run({ username: 5, password: ADMIN.password });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0].extensions).toEqual({ code: 'validation_error' });
    expect(result.errors![0].message).toMatch(/^Variable "\$username" got invalid value 5/);
  });

  it('a missing required variable is a validation_error too', async () => {
    const result = await run({ username: ADMIN.username });
    expect(result.errors![0]).toMatchObject({ extensions: { code: 'validation_error' }, message: expect.stringContaining('$password') });
  });

  it('well-typed variables run the operation', async () => {
    const result = await run({ username: ADMIN.username, password: ADMIN.password });
    expect(result.errors).toBeUndefined();
    expect((result.data as any).login.accessToken).toEqual(expect.any(String));
  });
});

describe('failures inside the executor', () => {
  const apiSchema: GraphQLSchema = buildSchema('type Query { ping: String }');
  /** A gateway whose executor does what the test says; everything else is the real direct path. */
  function withExecutor(executor: () => Promise<unknown>) {
    const gateway = { onSchemaLoadOrUpdate: (listener: (s: { apiSchema: GraphQLSchema }) => void) => listener({ apiSchema }), executor };
    const direct = directExecution(gateway as unknown as ApolloGateway, { logger: createLogger({ LOG_LEVEL: 'silent' }), metrics: true, maxResponseBytes: 1 << 20 });
    const context: GatewayContext = { requestId: 'r1', clientIp: '127.0.0.1', logger: createLogger({ LOG_LEVEL: 'silent' }) };
    return direct.execute('{ ping }', undefined, context);
  }

  it('a throw from the executor (query planning) is an internal_error of the operation, not a rejection', async () => {
    const result = await withExecutor(async () => { throw new Error('planner exploded'); });
    expect(result).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'internal_error' } })] });
    expect(JSON.stringify(result)).not.toContain('planner exploded'); // internal details stay in the log
  });

  it('a plain Error among the executor\'s errors (a data source\'s throw) is an internal_error too', async () => {
    const result = await withExecutor(async () => ({ data: null, errors: [new Error('socket hang up')] }));
    expect(result.errors).toEqual([expect.objectContaining({ extensions: { code: 'internal_error' } })]);
  });
});

describe('plans of one fetch from one subgraph: sent to it as planned, past the executor', () => {
  const config = loadConfig({ LOG_LEVEL: 'silent', AUTH_BOOTSTRAP_USERNAME: ADMIN.username, AUTH_BOOTSTRAP_PASSWORD: ADMIN.password, ...isolatedEnv() });
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
    for (const def of selectSubgraphs(['auth', 'tts'])) subgraphs.push(await startSubgraph(def, { config, logger, keys, events: log }));
    const plans = new SingleFetchPlans();
    gateway = new ApolloGateway({
      supergraphSdl: composeSupergraph(subgraphs.map((s) => ({ name: s.name, url: `http://${s.name}.invalid`, sdl: printSubgraphSchema(s.schema) }))),
      buildService: ({ name }) => new InProcessDataSource(subgraphs.find((s) => s.name === name)!),
      experimental_didResolveQueryPlan: plans.record,
    });
    direct = directExecution(gateway, { logger, metrics: true, maxResponseBytes: 1 << 20, plans });
    await gateway.load();
    const executor = gateway.executor;
    gateway.executor = (requestContext) => (executed.push(requestContext.request.query!), executor(requestContext));
    const login = await run('mutation { login(username: "admin", password: "' + ADMIN.password + '") { accessToken } }');
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
    direct.execute(query, {}, { requestId: 'r1', clientIp: '127.0.0.1', authorization: authorization && `Bearer ${authorization}`, logger });

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
    for (let i = 0; i < 2; i++) answers.push(await direct.execute(query, variables, { requestId: 'r1', clientIp: '127.0.0.1', authorization: `Bearer ${token}`, logger }));
    expect(answers[0].errors).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'not_found' }) })]);
    expect(answers[1]).toEqual(answers[0]);
    expect(executed).toEqual([query]);
  });

  it('leaves plans across subgraphs, and answers with __typename, to the executor every time', async () => {
    const across = '{ voices(first: 1) { items { id owner { username } } } }';
    const typename = '{ me { __typename username } }';
    for (const query of [across, typename]) {
      const first = await run(query, token);
      expect(first.errors).toBeUndefined();
      expect(await run(query, token)).toEqual(first);
    }
    expect((await run(typename, token)).data).toEqual({ me: { __typename: 'User', username: 'admin' } });
    expect(executed).toEqual([across, across, typename, typename, typename]);
  });
});

describe('a supergraph with @inaccessible', () => {
  it('sends every operation through the executor (it removes inaccessible values from answers)', async () => {
    const apiSchema = buildSchema('type Query { ping: String }');
    const plans = new SingleFetchPlans();
    const dataSource = { process: jest.fn(async () => ({ data: { ping: 'from the subgraph' } })) };
    const gateway = {
      onSchemaLoadOrUpdate: (listener: (s: { apiSchema: GraphQLSchema; coreSupergraphSdl: string }) => void) =>
        listener({ apiSchema, coreSupergraphSdl: 'type Query { ping: String @join__field(graph: A) secret: String @inaccessible }' }),
      executor: jest.fn(async (requestContext: any) => {
        const fetch = { kind: 'Fetch', serviceName: 'a', operation: '{ping}', operationName: undefined, operationKind: 'query' };
        plans.record({ queryPlan: { kind: 'QueryPlan', node: fetch }, serviceMap: { a: dataSource }, requestContext } as any);
        return { data: { ping: 'from the executor' } };
      }),
    };
    const direct = directExecution(gateway as unknown as ApolloGateway, { logger: createLogger({ LOG_LEVEL: 'silent' }), metrics: false, maxResponseBytes: 1 << 20, plans });
    const context: GatewayContext = { requestId: 'r1', clientIp: '127.0.0.1', logger: createLogger({ LOG_LEVEL: 'silent' }) };
    for (let i = 0; i < 3; i++) expect(await direct.execute('{ ping }', undefined, context)).toEqual({ data: { ping: 'from the executor' } });
    expect(gateway.executor).toHaveBeenCalledTimes(3);
    expect(dataSource.process).not.toHaveBeenCalled();
  });
});
