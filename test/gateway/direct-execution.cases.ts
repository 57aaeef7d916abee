// In one process the facade's operations skip Apollo Server's pipeline (gateway/direct-execution.ts).
// Their errors must come out as the pipeline's would: a variable value that does not fit its type
// is the caller's mistake, and a failure inside the gateway's executor is an error of the
// operation — never a rejected promise, which the facade would answer as 503 "gateway unreachable".
import type { ApolloGateway } from '@apollo/gateway';
import { buildSchema, GraphQLSchema } from 'graphql';
import { createGateway, Gateway } from '../../gateway';
import type { GatewayContext } from '../../gateway/data-sources';
import { directExecution } from '../../gateway/direct-execution';
import { loadConfig } from '../../lib/config';
import { EventLog } from '../../lib/event-log';
import { createLogger } from '../../lib/logger';
import { RunningSubgraph, startSubgraph } from '../../lib/subgraph';
import { loadKeys } from '../../lib/tokens';
import { selectSubgraphs } from '../../subgraphs';
import { ADMIN, cleanupDatabases, isolatedEnv } from '../helpers/server';

const LOGIN =
  'mutation Login($username: String!, $password: String!) { login(username: $username, password: $password) { accessToken } }';

describe('with the real gateway and the auth subgraph in-process', () => {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
    AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
    ...isolatedEnv(),
  });
  let log: EventLog;
  let auth: RunningSubgraph;
  let gateway: Gateway;

  beforeAll(async () => {
    const logger = createLogger(config);
    const keys = loadKeys(config);
    log = await EventLog.open(config, logger);
    auth = await startSubgraph((await selectSubgraphs(['auth']))[0], { config, logger, keys, events: log });
    gateway = await createGateway({ config, logger, keys, subgraphs: [{ name: 'auth', local: auth }] });
  });
  afterAll(async () => {
    await gateway?.stop();
    await auth?.stop();
    await log?.close();
    await cleanupDatabases(config);
  });

  const run = (variables: Record<string, unknown>) =>
    gateway.execute({ query: LOGIN, variables, headers: {}, clientIp: '127.0.0.1' });

  it('a variable of the wrong type is a validation_error naming the variable, as over HTTP', async () => {
    const result = await run({ username: 5, password: ADMIN.password });
    expect(result.errors).toHaveLength(1);
    expect(result.errors![0].extensions).toEqual({ code: 'validation_error' });
    expect(result.errors![0].message).toMatch(/^Variable "\$username" got invalid value 5/);
  });

  it('a missing required variable is a validation_error too', async () => {
    const result = await run({ username: ADMIN.username });
    expect(result.errors![0]).toMatchObject({
      extensions: { code: 'validation_error' },
      message: expect.stringContaining('$password'),
    });
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
    const gateway = {
      onSchemaLoadOrUpdate: (listener: (s: { apiSchema: GraphQLSchema }) => void) => listener({ apiSchema }),
      executor,
    };
    const direct = directExecution(gateway as unknown as ApolloGateway, {
      logger: createLogger({ LOG_LEVEL: 'silent' }),
      metrics: true,
      maxResponseBytes: 1 << 20,
    });
    const context: GatewayContext = {
      requestId: 'r1',
      clientIp: '127.0.0.1',
      logger: createLogger({ LOG_LEVEL: 'silent' }),
    };
    return direct.execute('{ ping }', undefined, context);
  }

  it('a throw from the executor (query planning) is an internal_error of the operation, not a rejection', async () => {
    const result = await withExecutor(async () => {
      throw new Error('planner exploded');
    });
    expect(result).toEqual({ errors: [expect.objectContaining({ extensions: { code: 'internal_error' } })] });
    expect(JSON.stringify(result)).not.toContain('planner exploded'); // internal details stay in the log
  });

  it("a plain Error among the executor's errors (a data source's throw) is an internal_error too", async () => {
    const result = await withExecutor(async () => ({ data: null, errors: [new Error('socket hang up')] }));
    expect(result.errors).toEqual([expect.objectContaining({ extensions: { code: 'internal_error' } })]);
  });
});
