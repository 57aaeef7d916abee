// Traces across the distributed layout: one REST request is one trace through the facade, the
// gateway and the subgraph down to its SQL, each hop under the one before; a request not sampled
// exports nothing yet passes its trace on; the synthesis it queues is rendered in a trace of its
// own that links back to it. The OTLP collector (test/helpers/otlp.ts) decodes the JSON export.
import { DistributedLayout, startDistributed } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { TRUSTED_PARENT_ATTRIBUTE } from '../../lib/tracing';
import { api, login } from '../helpers/http';
import { callerTrace, CLIENT, OtlpReceiver, otlpReceiver, SERVER } from '../helpers/otlp';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

onMysql('traces across facade → gateway → subgraph', () => {
  let receiver: OtlpReceiver;
  let layout: DistributedLayout;
  let env: Record<string, string>;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    env = {
      ...isolatedEnv(),
      LOG_LEVEL: 'info',
      AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
      AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100', // the SDK's own setting: export spans within 0.1 s
      // This test is the trusted caller (a load balancer, say) whose sampled flag the facade follows;
      // the hops behind it trust each other by the hop secret. TRACE_SAMPLE_RATIO (1) would
      // sample everything else; test/observability/tracing.test.ts is the caller no one trusts.
      TRACE_TRUST_PARENT: 'loopback',
    };
    layout = await startDistributed(env, { gateways: 1, facades: 1, workers: 1 });
  }, 120_000);

  afterAll(async () => {
    await layout?.stop();
    await receiver?.close();
    if (env) await cleanupDatabases(loadConfig(env));
  }, 60_000);

  const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const services = ['facade', 'gateway', 'subgraph-tts'];

  /** The whole trace: a server span in every hop, the SQL, and one span whose parent is the caller's. */
  const wholeTrace = (traceId: string, callerSpanId: string) =>
    until(
      () => {
        const spans = inTrace(traceId);
        const ids = new Set(spans.map((s) => s.spanId));
        const roots = spans.filter((s) => !ids.has(s.parentSpanId!));
        const complete =
          services.every((name) => spans.some((s) => s.service === name && s.kind === SERVER)) &&
          spans.some((s) => s.service === 'subgraph-tts' && s.attributes['db.system.name'] === 'mysql') &&
          roots.length === 1 &&
          roots[0].service === 'facade' &&
          roots[0].parentSpanId === callerSpanId;
        return complete && spans;
      },
      `the whole trace ${traceId}, from every hop`,
      30_000,
    );

  it('makes one trace of a REST request, each hop under the one before, down to its SQL, and log lines that carry its ids', async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    // The caller starts the trace, so its id is known here.
    const caller = callerTrace(true);
    const created = await api(layout.facades[0].url).post(
      '/api/v1/tts/voices',
      { name: 'Traced', base_voice: 'f3' },
      { token, headers: { traceparent: caller.traceparent } },
    );
    expect(created.status).toBe(202);
    const trace = await wholeTrace(caller.traceId, caller.spanId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (span: (typeof trace)[number]) => byId.get(span.parentSpanId!)!;
    const serverSpan = (service: string) => trace.find((s) => s.service === service && s.kind === SERVER)!;

    expect(serverSpan('facade').attributes[TRUSTED_PARENT_ATTRIBUTE]).toBe(true);
    // Each hop's server span is the child of the previous hop's client span (its request to it).
    const facadeCall = parentOf(serverSpan('gateway'));
    expect(facadeCall).toMatchObject({ service: 'facade', kind: CLIENT });
    expect(parentOf(facadeCall)).toBe(serverSpan('facade'));
    // … the gateway's fetch of that subgraph, in the gateway's operation.
    const fetch = parentOf(serverSpan('subgraph-tts'));
    expect(fetch).toMatchObject({ service: 'gateway', kind: CLIENT, name: 'fetch tts' });
    expect(fetch.attributes['subgraph.name']).toBe('tts');
    const gatewayOperation = parentOf(fetch);
    expect(gatewayOperation.name).toMatch(/^mutation\b/);
    expect(parentOf(gatewayOperation)).toBe(serverSpan('gateway'));
    // In the subgraph: its operation, and the statements under it (their shape, not the values).
    const subgraphOperation = trace.find(
      (s) => s.service === 'subgraph-tts' && s.parentSpanId === serverSpan('subgraph-tts').spanId,
    )!;
    expect(subgraphOperation.name).toMatch(/^mutation\b/);
    const statements = trace.filter((s) => s.service === 'subgraph-tts' && s.attributes['db.system.name'] === 'mysql');
    for (const statement of statements) expect(parentOf(statement)).toBe(subgraphOperation);
    const sql = statements.map((s) => String(s.attributes['db.query.text'])).join('\n');
    expect(sql).toMatch(/INSERT INTO/i);
    expect(sql).not.toContain('Traced');

    // The request's log lines carry the trace, in every hop.
    for (const [process, service] of [
      [layout.facades[0], 'facade'],
      [layout.gateways[0], 'gateway'],
      [layout.subgraphs.find((p) => p.name === 'subgraph tts')!, 'subgraph-tts'],
    ] as const) {
      const logged = await until(
        () => process.logs.find((l) => l.trace_id === caller.traceId && l.msg === 'request completed'),
        `a ${service} log line with the trace id`,
      );
      expect(logged.span_id).toBe(serverSpan(service).spanId);
    }
  });

  it('exports nothing of a request the trusted caller did not sample, and still passes its trace on to every hop', async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    const unsampled = callerTrace(false);
    expect(
      (
        await api(layout.facades[0].url).get('/api/v1/tts/voices', {
          token,
          headers: { traceparent: unsampled.traceparent },
        })
      ).status,
    ).toBe(200);
    // Every hop logs the caller's trace id: the traceparent reached it.
    const logged = [];
    for (const process of [
      layout.facades[0],
      layout.gateways[0],
      layout.subgraphs.find((p) => p.name === 'subgraph tts')!,
    ])
      logged.push(
        await until(
          () => process.logs.find((l) => l.trace_id === unsampled.traceId && l.msg === 'request completed'),
          `a ${process.name} log line with the unsampled trace id`,
        ),
      );
    expect(logged.every((l) => l.trace_flags === '00' || l.trace_flags === undefined)).toBe(true);
    // A sampled request after it, through the same processes: once its whole trace has arrived,
    // anything of the first would have too (each process exports its spans in the order they end).
    const sampled = callerTrace(true);
    await api(layout.facades[0].url).post(
      '/api/v1/tts/voices',
      { name: 'After', base_voice: 'f3' },
      { token, headers: { traceparent: sampled.traceparent } },
    );
    await wholeTrace(sampled.traceId, sampled.spanId);
    expect(inTrace(unsampled.traceId)).toEqual([]);
  });

  it('renders a synthesis in a trace of its own that links to the request that queued it', async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    const caller = callerTrace(true);
    const queued = await api(layout.facades[0].url).post(
      '/api/v1/tts/syntheses',
      { text: 'Traced speech.', base_voice: 'f3' },
      { token, headers: { traceparent: caller.traceparent } },
    );
    expect(queued.status).toBe(202);
    const render = await until(
      () =>
        receiver.spans.find((s) => s.name === 'synthesis.render' && s.attributes['synthesis.id'] === queued.body.id),
      "the worker's render span",
      30_000,
    );
    expect(render.service).toBe('worker');
    expect(render.traceId).not.toBe(caller.traceId);
    expect(render.links.map((l) => l.traceId)).toContain(caller.traceId);
  });
});
