// Tracing on the one-process server, as a real process exporting over OTLP/HTTP to a collector in
// this test: the spans the service makes itself (lib/tracing/) arrive decoded, under the
// caller's trace, each under its parent, with the statements' shape and no values, failures
// marked, and the log lines of the request carrying its trace. The distributed layout's trace
// across processes is test/e2e/tracing.test.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { HopSecret } from '../../lib/hop';
import { parseTraceParent, sampledFor, traceParentTrust, TRUSTED_PARENT_ATTRIBUTE } from '../../lib/tracing';
import { api, login } from '../helpers/http';
import { callerTrace, ERROR, OtlpReceiver, otlpReceiver, ReceivedSpan, SERVER } from '../helpers/otlp';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';
import { until } from '../helpers/wait';

describe('traces of the one-process server, exported over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let env: Record<string, string>;
  const lines: Record<string, any>[] = [];
  let url: string;
  let child: ReturnType<typeof spawn>;
  let exited: Promise<number | null>;

  beforeAll(async () => {
    receiver = await otlpReceiver();
    env = {
      ...isolatedEnv(),
      LOG_LEVEL: 'info',
      AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
      AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_BSP_SCHEDULE_DELAY: '100', // the SDK's own setting: export spans within 0.1 s
      TRACE_SAMPLE_RATIO: '1',
      // No TRACE_TRUST_PARENT: this test is a caller no one trusts.
    };
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [path.join(__dirname, '../../dist/bin/all-in-one.js')], {
      env: { ...process.env, NODE_ENV: 'production', ...env, HOST: '127.0.0.1', PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    exited = new Promise((resolve) => child.once('exit', resolve));
    let buffered = '';
    child.stdout!.on('data', (d: Buffer) => {
      buffered += d.toString('utf8');
      const parts = buffered.split('\n');
      buffered = parts.pop()!;
      for (const part of parts.filter(Boolean)) lines.push(JSON.parse(part) as Record<string, any>);
    });
    await until(() => lines.some((l) => l.msg === 'ready'), 'the server to be ready', 60_000);
  }, 90_000);

  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGTERM');
    await exited;
    await receiver?.close();
    if (env) await cleanupDatabases(loadConfig(env));
  }, 30_000);

  const inTrace = (traceId: string) => receiver.spans.filter((s) => s.traceId === traceId);
  const childrenOf = (spans: ReceivedSpan[], parent: ReceivedSpan) =>
    spans.filter((s) => s.parentSpanId === parent.spanId);

  it("makes one trace of a request under the caller: server span, operation, the subgraph's operation and its statements", async () => {
    const { access_token: token } = await login(url, ADMIN);
    const caller = callerTrace(true);
    const res = await api(url).get('/api/v1/auth/session', { token, headers: { traceparent: caller.traceparent } });
    expect(res.status).toBe(200);

    // Spans arrive as they end, the server span last.
    const server = await until(
      () => inTrace(caller.traceId).find((s) => s.kind === SERVER),
      'the server span of the request',
    );
    const spans = inTrace(caller.traceId);
    expect(server).toMatchObject({
      service: 'all-in-one',
      name: 'GET /api/v1/auth/session',
      parentSpanId: caller.spanId,
    });
    expect(server.attributes).toMatchObject({
      'http.request.method': 'GET',
      'http.route': '/api/v1/auth/session',
      'http.response.status_code': 200,
      [TRUSTED_PARENT_ATTRIBUTE]: false,
    });
    // Every span is in the caller's trace and has its parent in it, but the server span, whose parent is the caller.
    const ids = new Set(spans.map((s) => s.spanId));
    expect(spans.filter((s) => !ids.has(s.parentSpanId!)).map((s) => s.name)).toEqual([server.name]);

    const [operation] = childrenOf(spans, server);
    expect(operation.name).toMatch(/^query\b/);
    expect(operation.attributes['graphql.operation.type']).toBe('query');
    // The auth subgraph's operation, run in this process for the gateway's fetch.
    const [subgraphOperation] = childrenOf(spans, operation);
    expect(subgraphOperation.name).toMatch(/^query \w+__auth__\d+$/);
    const statements = childrenOf(spans, subgraphOperation);
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.attributes['db.system.name']).toBe(TEST_DB === 'mysql' ? 'mysql' : 'sqlite');
      expect(statement.attributes['db.query.text']).toMatch(/^\s*SELECT\b/i);
    }
    // The statement's shape, never its values: the session's id and the user's are placeholders.
    const text = statements.map((s) => String(s.attributes['db.query.text'])).join('\n');
    expect(text).toContain('?');
    expect(text).not.toContain(res.body.user_id);
    expect(text).not.toContain(res.body.session_id);
    // Spans end in order, within their parents.
    for (const span of spans.filter((s) => s !== server)) {
      const parent = spans.find((s) => s.spanId === span.parentSpanId)!;
      expect(BigInt(span.startTimeUnixNano) >= BigInt(parent.startTimeUnixNano)).toBe(true);
      expect(BigInt(span.endTimeUnixNano) <= BigInt(parent.endTimeUnixNano)).toBe(true);
    }
    expect(receiver.undecoded).toEqual([]);
  });

  it("keeps an untrusted caller's trace id but not its choice: a cleared sampled flag is sampled by the process's own rule", async () => {
    const { access_token: token } = await login(url, ADMIN);
    const caller = callerTrace(false); // "do not sample"
    expect(
      (await api(url).get('/api/v1/auth/session', { token, headers: { traceparent: caller.traceparent } })).status,
    ).toBe(200);
    // TRACE_SAMPLE_RATIO is 1: exported, under the caller's id.
    const server = await until(() => inTrace(caller.traceId).find((s) => s.kind === SERVER), 'the server span');
    expect(server.parentSpanId).toBe(caller.spanId);
    expect(server.attributes[TRUSTED_PARENT_ATTRIBUTE]).toBe(false);
  });

  it('marks failed spans with the error status', async () => {
    const caller = callerTrace(true);
    const res = await api(url).get('/api/v1/auth/session', {
      token: 'not-a-token',
      headers: { traceparent: caller.traceparent },
    });
    expect(res.status).toBe(401);
    const server = await until(() => inTrace(caller.traceId).find((s) => s.kind === SERVER), 'the server span');
    // A 4xx is the caller's failure, not the server's (OpenTelemetry's HTTP conventions); the operation failed.
    expect(server.status.code ?? 0).not.toBe(ERROR);
    const operation = inTrace(caller.traceId).find((s) => s.parentSpanId === server.spanId)!;
    expect(operation.status.code).toBe(ERROR);
    expect(operation.attributes['graphql.outcome']).toBe('unauthorized');
  });

  it("puts the request's trace on its log lines", async () => {
    const { access_token: token } = await login(url, ADMIN);
    const caller = callerTrace(true);
    const requestId = `traced-${Date.now()}`;
    await api(url).get('/api/v1/auth/session', {
      token,
      headers: { traceparent: caller.traceparent, 'x-request-id': requestId },
    });
    const line = await until(
      () => lines.find((l) => l.request_id === requestId && l.msg === 'request completed'),
      'the access log line',
    );
    expect(line.trace_id).toBe(caller.traceId);
    const server = await until(() => inTrace(caller.traceId).find((s) => s.kind === SERVER), 'the server span');
    expect(line.span_id).toBe(server.spanId);
    // A line written inside the request (the audit line of a failed login) carries it too.
    const failed = callerTrace(true);
    await api(url).post(
      '/api/v1/auth/login',
      { username: ADMIN.username, password: 'not the password' },
      { headers: { traceparent: failed.traceparent } },
    );
    const audit = await until(() => lines.find((l) => l.audit === 'login.failed' && l.trace_id), 'the audit line');
    expect(audit.trace_id).toBe(failed.traceId);
  });
});

describe('whose traceparent decides sampling', () => {
  const request = (remoteAddress: string) =>
    ({ socket: { remoteAddress } }) as unknown as import('node:http').IncomingMessage;

  it('reads W3C traceparent, and starts a new trace for a malformed one', () => {
    const traceId = 'a'.repeat(32);
    expect(parseTraceParent(`00-${traceId}-${'b'.repeat(16)}-01`)).toEqual({
      traceId,
      spanId: 'b'.repeat(16),
      sampled: true,
    });
    expect(parseTraceParent(`00-${traceId}-${'b'.repeat(16)}-00`)?.sampled).toBe(false);
    for (const bad of [
      undefined,
      '',
      `00-${'0'.repeat(32)}-${'b'.repeat(16)}-01`,
      `00-${traceId}-${'0'.repeat(16)}-01`,
      `00-${traceId.toUpperCase()}-${'b'.repeat(16)}-01`,
      `ff-${traceId}-${'b'.repeat(16)}-01`,
      `00-${traceId}-${'b'.repeat(16)}-01-extra`,
    ])
      expect(parseTraceParent(bad)).toBeUndefined();
  });

  it('trusts the callers of TRACE_TRUST_PARENT only', () => {
    const loopback = traceParentTrust(['loopback']);
    expect([loopback(request('127.0.0.1')), loopback(request('::ffff:127.0.0.1')), loopback(request('::1'))]).toEqual([
      true,
      true,
      true,
    ]);
    expect(loopback(request('10.0.0.1'))).toBe(false);
    expect(traceParentTrust([])(request('127.0.0.1'))).toBe(false);
    const subnet = traceParentTrust(['10.0.0.0/8', 'fd00::1']);
    expect([subnet(request('10.20.30.40')), subnet(request('fd00::1')), subnet(request('11.0.0.1'))]).toEqual([
      true,
      true,
      false,
    ]);
    expect(() => loadConfig({ TRACE_TRUST_PARENT: 'everyone' })).toThrow(/TRACE_TRUST_PARENT/);
  });

  it('trusts a caller presenting the hop secret (SUBGRAPH_SECRET), from any address', () => {
    const SECRET = 'a-hop-secret-of-at-least-thirty-two-characters';
    const from = (remoteAddress: string, headers: Record<string, string>) =>
      ({ socket: { remoteAddress }, headers }) as unknown as import('node:http').IncomingMessage;
    const trust = traceParentTrust([], new HopSecret(SECRET));
    expect(trust(from('198.51.100.7', { 'x-hop-secret': SECRET }))).toBe(true);
    expect(trust(from('198.51.100.7', {}))).toBe(false);
    expect(trust(from('198.51.100.7', { 'x-hop-secret': `${SECRET}x` }))).toBe(false);
    // Without a configured secret no header is believed; the address list still is.
    const unset = traceParentTrust(['loopback'], new HopSecret(undefined));
    expect(unset(from('198.51.100.7', { 'x-hop-secret': SECRET }))).toBe(false);
    expect(unset(from('127.0.0.1', {}))).toBe(true);
  });

  it("follows a trusted caller's sampled flag, and the process's own rule for anyone else", () => {
    const parent = (sampled: boolean) => ({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), sampled });
    // Own rule: sample nothing. A caller's "sampled" forces nothing unless it is trusted.
    expect(sampledFor(0, parent(true), false)).toBe(false);
    expect(sampledFor(0, parent(true), true)).toBe(true);
    // Own rule: sample everything. A caller's "not sampled" stops nothing unless it is trusted.
    expect(sampledFor(1, parent(false), false)).toBe(true);
    expect(sampledFor(1, parent(false), true)).toBe(false);
    // A share: about that share of a caller's traces, whatever its flag.
    const draws = Array.from({ length: 4000 }, () => sampledFor(0.1, parent(true), false)).filter(Boolean).length;
    expect(draws).toBeGreaterThan(250);
    expect(draws).toBeLessThan(550);
  });
});
