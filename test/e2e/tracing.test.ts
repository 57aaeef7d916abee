// Traces across the distributed layout: one REST request is one trace through the facade, the
// gateway and the subgraph down to its SQL, and the synthesis it queues is rendered in a trace
// of its own that links back to it. The OTLP collector is a small HTTP server in this test that
// decodes the OTLP/HTTP JSON export.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ROOT_CONTEXT, SpanKind, trace, TraceFlags } from '@opentelemetry/api';
import { SamplingDecision } from '@opentelemetry/sdk-trace-base';
import { DistributedLayout, startDistributed } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { HopSecret } from '../../lib/hop';
import { callerSampler, traceParentTrust, TRUSTED_PARENT_ATTRIBUTE } from '../../lib/tracing';
import { api, login } from '../helpers/http';
import { ADMIN, cleanupDatabases, isolatedEnv, TEST_DB } from '../helpers/server';

// Several processes share one database only on MySQL; SQLite is the one-process default.
const onMysql = TEST_DB === 'mysql' ? describe : describe.skip;

type Attr = { key: string; value: Record<string, unknown> };
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

const attrs = (list: Attr[] = []) => Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));

/** An OTLP/HTTP receiver that keeps every span it is sent. */
function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const payload = JSON.parse(body) as { resourceSpans: any[] };
        for (const rs of payload.resourceSpans ?? []) {
          const service = String(attrs(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) {
            for (const s of ss.spans ?? []) {
              spans.push({
                service,
                traceId: s.traceId,
                spanId: s.spanId,
                parentSpanId: s.parentSpanId || undefined,
                name: s.name,
                kind: s.kind,
                attributes: attrs(s.attributes),
                links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
              });
            }
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return { server, spans };
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  explain: () => unknown = () => '',
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = probe();
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(explain(), null, 1)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

onMysql('traces across facade → gateway → subgraph', () => {
  const receiver = otlpReceiver();
  let layout: DistributedLayout;
  let env: Record<string, string>;

  beforeAll(async () => {
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.server.address() as AddressInfo;
    env = {
      ...isolatedEnv(),
      LOG_LEVEL: 'info',
      AUTH_BOOTSTRAP_USERNAME: ADMIN.username,
      AUTH_BOOTSTRAP_PASSWORD: ADMIN.password,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_BSP_SCHEDULE_DELAY: '100', // the SDK's own setting: export spans within 0.1 s
    };
    layout = await startDistributed(env, { gateways: 1, facades: 1, workers: 1 });
  }, 120_000);

  afterAll(async () => {
    await layout?.stop();
    receiver.server.close();
    if (env) await cleanupDatabases(loadConfig(env));
  }, 60_000);

  it('makes one trace of a REST request, with spans in every hop and the SQL, and log lines that carry its ids', async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    // The caller starts the trace, so its id is known here.
    const traceId = crypto.randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${crypto.randomBytes(8).toString('hex')}-01`;
    const created = await api(layout.facades[0].url).post(
      '/api/v1/tts/voices',
      { name: 'Traced', base_voice: 'f3' },
      { token, headers: { traceparent } },
    );
    expect(created.status).toBe(202);

    const services = ['facade', 'gateway', 'subgraph-tts'];
    // Spans arrive as they end (a server span after its children): wait for the whole trace.
    const complete = (inTrace: typeof receiver.spans) => {
      const ids = new Set(inTrace.map((s) => s.spanId));
      const sql = inTrace.some(
        (s) =>
          s.service === 'subgraph-tts' &&
          (s.attributes['db.system'] === 'mysql' || s.attributes['db.system.name'] === 'mysql'),
      );
      // Exactly one span's parent is outside the trace: the facade's server span, child of the caller.
      const roots = inTrace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
      return (
        sql &&
        services.every((name) => inTrace.some((s) => s.service === name && s.kind === 2)) &&
        roots.length === 1 &&
        roots[0].service === 'facade'
      );
    };
    const trace = await waitFor(
      'the whole trace, from every hop',
      () => {
        const inTrace = receiver.spans.filter((s) => s.traceId === traceId);
        return complete(inTrace) ? inTrace : undefined;
      },
      () =>
        receiver.spans
          .filter((s) => s.traceId === traceId)
          .map((s) => `${s.service} ${s.kind} ${s.name} ${s.spanId} <- ${s.parentSpanId}`),
    );
    const ids = new Set(trace.map((s) => s.spanId));
    // Each hop's server span is a child of the previous hop's client span.
    const serverSpan = (service: string) => trace.find((s) => s.service === service && s.kind === 2 /* SERVER */)!;
    expect(ids.has(serverSpan('gateway').parentSpanId!)).toBe(true);
    expect(trace.find((s) => s.spanId === serverSpan('gateway').parentSpanId)!.service).toBe('facade');
    expect(trace.find((s) => s.spanId === serverSpan('subgraph-tts').parentSpanId)!.service).toBe('gateway');

    // The request's log lines carry the trace.
    const logged = await waitFor('a facade log line with the trace id', () =>
      layout.facades[0].logs.find((l) => l.trace_id === traceId),
    );
    expect(logged.span_id).toMatch(/^[0-9a-f]{16}$/);
  });

  it("keeps an untrusted caller's trace id but not its choice: a cleared sampled flag is sampled by the process's own rule", async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    const traceId = crypto.randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${crypto.randomBytes(8).toString('hex')}-00`; // "do not sample"
    const created = await api(layout.facades[0].url).post(
      '/api/v1/tts/voices',
      { name: 'Unsampled?', base_voice: 'f3' },
      { token, headers: { traceparent } },
    );
    expect(created.status).toBe(202);
    // TRACE_SAMPLE_RATIO is 1 and the test is trusted by no one: every hop exports, under the caller's id.
    await waitFor(
      'the facade, gateway and subgraph spans of the trace',
      () =>
        ['facade', 'gateway', 'subgraph-tts'].every((service) =>
          receiver.spans.some((s) => s.traceId === traceId && s.service === service && s.kind === 2),
        ) || undefined,
    );
    const facadeSpan = receiver.spans.find((s) => s.traceId === traceId && s.service === 'facade' && s.kind === 2)!;
    expect(facadeSpan.attributes[TRUSTED_PARENT_ATTRIBUTE]).toBe(false);
  });

  it('renders a synthesis in a trace of its own that links to the request that queued it', async () => {
    const { access_token: token } = await login(layout.facades[0].url, ADMIN);
    const traceId = crypto.randomBytes(16).toString('hex');
    const traceparent = `00-${traceId}-${crypto.randomBytes(8).toString('hex')}-01`;
    const queued = await api(layout.facades[0].url).post(
      '/api/v1/tts/syntheses',
      { text: 'Traced speech.', base_voice: 'f3' },
      { token, headers: { traceparent } },
    );
    expect(queued.status).toBe(202);
    const render = await waitFor("the worker's render span", () =>
      receiver.spans.find((s) => s.name === 'synthesis.render' && s.attributes['synthesis.id'] === queued.body.id),
    );
    expect(render.service).toBe('worker');
    expect(render.traceId).not.toBe(traceId);
    expect(render.links.map((l) => l.traceId)).toContain(traceId);
  });
});

describe('whose traceparent decides sampling', () => {
  const request = (remoteAddress: string) =>
    ({ socket: { remoteAddress } }) as unknown as import('node:http').IncomingMessage;
  const remote = (flags: TraceFlags) =>
    trace.setSpanContext(ROOT_CONTEXT, {
      traceId: crypto.randomBytes(16).toString('hex'),
      spanId: crypto.randomBytes(8).toString('hex'),
      traceFlags: flags,
      isRemote: true,
    });
  const decide = (ratio: number, flags: TraceFlags, trusted: boolean) =>
    callerSampler(ratio).shouldSample(
      remote(flags),
      crypto.randomBytes(16).toString('hex'),
      'GET',
      SpanKind.SERVER,
      { [TRUSTED_PARENT_ATTRIBUTE]: trusted },
      [],
    ).decision;

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
    // Own rule: sample nothing. A caller's "sampled" forces nothing unless it is trusted.
    expect(decide(0, TraceFlags.SAMPLED, false)).toBe(SamplingDecision.NOT_RECORD);
    expect(decide(0, TraceFlags.SAMPLED, true)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    // Own rule: sample everything. A caller's "not sampled" stops nothing unless it is trusted.
    expect(decide(1, TraceFlags.NONE, false)).toBe(SamplingDecision.RECORD_AND_SAMPLED);
    expect(decide(1, TraceFlags.NONE, true)).toBe(SamplingDecision.NOT_RECORD);
  });
});
