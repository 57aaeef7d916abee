// OpenTelemetry's standard environment variables (the SDK configuration specification), one test
// each, against a real OTLP/HTTP receiver (test/helpers/otlp.ts, which decodes protobuf and JSON
// on its own): real processes (dist/) started with the variable, a request or two, and what
// arrives, where, how encoded and with which headers. A value this service does not support
// stops the start (exit 2) with a message naming the variable.
// Run once, on SQLite (DATABASE_INCIDENTAL in jest.config.js): the facades open no database and the
// one subgraph process's database is not in what is checked (service names, samplers, exports).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { callerTrace, OtlpReceiver, otlpReceiver, SERVER } from '../helpers/otlp';
import { startProcess, ServiceProcess } from '../helpers/processes';
import { isolatedEnv } from '../helpers/server';
import { until } from '../helpers/wait';

const BIN = path.join(__dirname, '../../dist/bin');
const receivers: OtlpReceiver[] = [];
const processes: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await Promise.all(receivers.map((r) => r.close()));
}, 30_000);

async function receiver(pathname?: string): Promise<OtlpReceiver> {
  const r = await otlpReceiver(pathname);
  receivers.push(r);
  return r;
}

/**
 * A facade (no gateway needed for these routes) with `env`: each of `calls` is a GET of the
 * OpenAPI document, with the caller's traceparent when given; loopback callers are trusted
 * with their sampled flag, so that parent-based samplers can be told from the others.
 */
async function facade(env: Record<string, string>) {
  const started = await startProcess('facade', 'facade.js', [], {
    GATEWAY_URL: 'http://127.0.0.1:9',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    TRACE_TRUST_PARENT: 'loopback',
    LOG_LEVEL: 'warn',
    ...isolatedEnv(),
    ...env,
  });
  processes.push(started);
  return {
    call: async (traceparent?: string) => {
      const res = await fetch(`${started.url}/api/v1/openapi.json`, { headers: traceparent ? { traceparent } : {} });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
    },
    /** Stops the process: its batch is flushed on the way out, so what was to be sent has been. */
    stop: () => started.kill(),
  };
}

/** Exits with 2 before serving, naming `variable` on standard error. */
function refused(env: Record<string, string>, variable: string): string {
  const run = spawnSync(process.execPath, [path.join(BIN, 'facade.js')], {
    env: { ...process.env, GATEWAY_URL: 'http://127.0.0.1:9', PORT: '0', HOST: '127.0.0.1', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(variable);
  return run.stderr;
}

const serverSpans = (r: OtlpReceiver) => r.spans.filter((s) => s.kind === SERVER);

describe('OpenTelemetry environment variables', () => {
  it('OTEL_EXPORTER_OTLP_ENDPOINT: spans go to <endpoint>/v1/traces as JSON (the default here), named after the process kind', async () => {
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url });
    await f.call();
    const [span] = await until(() => serverSpans(r).length > 0 && serverSpans(r), 'a server span');
    expect(span).toMatchObject({ service: 'facade', name: 'GET /api/v1/openapi.json' });
    expect(r.requests.every((q) => q.path === '/v1/traces' && q.encoding === 'json')).toBe(true);
    expect(r.undecoded).toEqual([]);
  });

  it('a subgraph process is subgraph-<name> by default', async () => {
    const r = await receiver();
    const auth = await startProcess('subgraph auth', 'subgraph.js', ['auth'], {
      ...isolatedEnv(),
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_BSP_SCHEDULE_DELAY: '50',
      LOG_LEVEL: 'warn',
    });
    processes.push(auth);
    const res = await fetch(`${auth.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    await res.arrayBuffer();
    const [span] = await until(() => serverSpans(r).length > 0 && serverSpans(r), 'a server span');
    expect(span.service).toBe('subgraph-auth');
  });

  it('OTEL_SERVICE_NAME names the service', async () => {
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_SERVICE_NAME: 'facade-eu-1' });
    await f.call();
    const [span] = await until(() => serverSpans(r).length > 0 && serverSpans(r), 'a server span');
    expect(span.service).toBe('facade-eu-1');
  });

  it('OTEL_RESOURCE_ATTRIBUTES adds resource attributes (percent-decoded) and may name the service; OTEL_SERVICE_NAME wins', async () => {
    const attributes = 'deployment.environment=staging,service.name=from-attributes,team=voice%20and%20notes';
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_RESOURCE_ATTRIBUTES: attributes });
    await f.call();
    const [span] = await until(() => serverSpans(r).length > 0 && serverSpans(r), 'a server span');
    expect(span.resource).toMatchObject({
      'service.name': 'from-attributes',
      'deployment.environment': 'staging',
      team: 'voice and notes',
    });
    const r2 = await receiver();
    const f2 = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r2.url,
      OTEL_RESOURCE_ATTRIBUTES: attributes,
      OTEL_SERVICE_NAME: 'named',
    });
    await f2.call();
    const [named] = await until(() => serverSpans(r2).length > 0 && serverSpans(r2), 'a server span');
    expect(named.resource).toMatchObject({ 'service.name': 'named', 'deployment.environment': 'staging' });
    refused({ OTEL_RESOURCE_ATTRIBUTES: 'no-equals-sign' }, 'OTEL_RESOURCE_ATTRIBUTES');
  });

  it('OTEL_TRACES_SAMPLER=always_off exports nothing, even for a trusted caller that sampled', async () => {
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_TRACES_SAMPLER: 'always_off' });
    for (let i = 0; i < 5; i++) await f.call(callerTrace(true).traceparent);
    await f.stop();
    expect(r.spans).toEqual([]);
  });

  it('OTEL_TRACES_SAMPLER=always_on samples whatever the parent says; parentbased_always_off follows a trusted parent', async () => {
    const r = await receiver();
    const on = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_TRACES_SAMPLER: 'always_on' });
    const unsampled = callerTrace(false);
    await on.call(unsampled.traceparent);
    await until(() => serverSpans(r).some((s) => s.traceId === unsampled.traceId), 'the span of an unsampled parent');

    const r2 = await receiver();
    const off = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r2.url, OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    const sampled = callerTrace(true);
    await off.call(); // no parent: the root sampler, always off
    await off.call(callerTrace(false).traceparent);
    await off.call(sampled.traceparent);
    await off.stop();
    expect(serverSpans(r2).map((s) => s.traceId)).toEqual([sampled.traceId]);
  });

  it('OTEL_TRACES_SAMPLER_ARG is the ratio of traceidratio and parentbased_traceidratio (0 to 1)', async () => {
    const r = await receiver();
    const none = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_TRACES_SAMPLER: 'traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    for (let i = 0; i < 5; i++) await none.call(callerTrace(true).traceparent); // not parent-based: the parent counts for nothing
    await none.stop();
    expect(r.spans).toEqual([]);

    const r2 = await receiver();
    const parentBased = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r2.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    });
    const sampled = callerTrace(true);
    await parentBased.call();
    await parentBased.call(sampled.traceparent);
    await parentBased.stop();
    expect(serverSpans(r2).map((s) => s.traceId)).toEqual([sampled.traceId]);

    refused({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG');
    refused({ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER');
  });

  it('TRACE_SAMPLE_RATIO stays a shorthand for parentbased_traceidratio; OTEL_TRACES_SAMPLER wins over it', async () => {
    const r = await receiver();
    const shorthand = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, TRACE_SAMPLE_RATIO: '0' });
    const sampled = callerTrace(true);
    await shorthand.call();
    await shorthand.call(sampled.traceparent);
    await shorthand.stop();
    expect(serverSpans(r).map((s) => s.traceId)).toEqual([sampled.traceId]);

    const r2 = await receiver();
    const standard = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r2.url,
      TRACE_SAMPLE_RATIO: '0',
      OTEL_TRACES_SAMPLER: 'always_on',
    });
    await standard.call();
    await until(() => serverSpans(r2).length > 0, 'a span sampled by OTEL_TRACES_SAMPLER');
  });

  it('OTEL_SDK_DISABLED=true turns tracing off with an endpoint set', async () => {
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_SDK_DISABLED: 'true' });
    for (let i = 0; i < 3; i++) await f.call();
    await f.stop();
    expect(r.requests).toEqual([]);
    refused({ OTEL_SDK_DISABLED: 'maybe' }, 'OTEL_SDK_DISABLED');
  });

  it('OTEL_TRACES_EXPORTER=none exports nothing; otlp is accepted; other exporters stop the start', async () => {
    const r = await receiver();
    const f = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_TRACES_EXPORTER: 'none' });
    for (let i = 0; i < 3; i++) await f.call();
    await f.stop();
    expect(r.requests).toEqual([]);

    const r2 = await receiver();
    const otlp = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r2.url, OTEL_TRACES_EXPORTER: 'otlp' });
    await otlp.call();
    await until(() => serverSpans(r2).length > 0, 'a span');
    expect(refused({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER')).toMatch(/otlp and none/);
  });

  it('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as it is (no /v1/traces added), over OTEL_EXPORTER_OTLP_ENDPOINT', async () => {
    const r = await receiver('/collector/traces');
    const f = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${r.url}/collector/traces`,
    });
    await f.call();
    await until(() => serverSpans(r).length > 0, 'a span at the traces endpoint');
    expect(new Set(r.requests.map((q) => q.path))).toEqual(new Set(['/collector/traces']));
  });

  it('OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS are sent with each export (the traces’ own win)', async () => {
    const r = await receiver();
    const f = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=t1,x-api-key=general',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-api-key=traces%20only',
    });
    await f.call();
    await until(() => r.requests.length > 0, 'an export');
    expect(r.requests[0].headers).toMatchObject({ 'x-tenant': 't1', 'x-api-key': 'traces only' });
  });

  it('OTEL_EXPORTER_OTLP_PROTOCOL and OTEL_EXPORTER_OTLP_TRACES_PROTOCOL choose http/json or http/protobuf; grpc stops the start', async () => {
    const r = await receiver();
    const proto = await facade({ OTEL_EXPORTER_OTLP_ENDPOINT: r.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
    await proto.call();
    const [span] = await until(() => serverSpans(r).length > 0 && serverSpans(r), 'a span');
    expect(span.service).toBe('facade');
    expect(r.requests.map((q) => q.encoding)).toEqual(r.requests.map(() => 'protobuf'));

    const r2 = await receiver();
    const tracesOwn = await facade({
      OTEL_EXPORTER_OTLP_ENDPOINT: r2.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    });
    await tracesOwn.call();
    const [decoded] = await until(() => serverSpans(r2).length > 0 && serverSpans(r2), 'a span');
    expect(decoded).toMatchObject({ service: 'facade', name: 'GET /api/v1/openapi.json' });
    expect(decoded.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(decoded.attributes['http.response.status_code']).toBe(200);
    expect(r2.requests.map((q) => q.encoding)).toEqual(r2.requests.map(() => 'protobuf'));

    expect(refused({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_PROTOCOL')).toMatch(/grpc/);
    refused({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/thrift' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL');
  });
});
