// Tracing, on only when OTEL_EXPORTER_OTLP_ENDPOINT is set, made by this service's own code
// rather than by OpenTelemetry's instrumentations (issue 36). Those wrapped every http request,
// Express layer, GraphQL resolver and log call, sampled or not, and with them a request cost
// 2.2× as much CPU at 10 % sampling. As Apollo Router and Hive Gateway do, the spans here come
// from the project's own request path:
// - the process edge (lib/http-app.ts): reads `traceparent`, decides sampling once, and opens the
//   server span; the request then runs in its `RequestScope` (lib/request-context.ts, one
//   AsyncLocalStorage, entered only while tracing is on);
// - the operation pipeline (lib/operation-pipeline/tracing.ts): one span per GraphQL operation;
// - the hops (lib/http-client.ts, gateway/data-sources.ts): a client span per fetch, and
//   `traceparent` on every request to the next hop (lib/request-context.ts forwardedHeaders);
// - the database (lib/database/open.ts): a span per statement, its text as TypeORM sends it
//   (placeholders, never the values);
// - the synthesis job (subgraphs/tts): a trace of its own, linked to the request that queued it.
// A request that is not sampled gets its scope (trace id, span id, flag) and nothing else: no
// span object, no timing, no export. Log lines written in a scope carry its trace_id and span_id
// (lib/logger.ts), sampled or not (the contract's "Limits").
//
// A caller's `traceparent` is kept (its trace id is passed on and logged, sampled or not), but
// its sampled flag is believed only from TRACE_TRUST_PARENT or a hop presenting the hop secret;
// from anyone else the process's own rule (OTEL_TRACES_SAMPLER, or TRACE_SAMPLE_RATIO) decides,
// so that no caller can force or stop the export (issue 29). Spans are exported over OTLP/HTTP
// (protobuf or JSON, OTEL_EXPORTER_OTLP_PROTOCOL) by OpenTelemetry's BatchSpanProcessor and
// exporter. OpenTelemetry's standard variables are read by lib/config.ts (`config.tracing`); the
// entry point starts tracing with them (runService), naming the process's kind.

import crypto from 'node:crypto';
import type http from 'node:http';
import net from 'node:net';
import type { Attributes, HrTime, Link, SpanContext, SpanStatus } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Resource } from '@opentelemetry/resources';
import type { DataSource, EntitySubscriberInterface } from 'typeorm';
import type { AfterQueryEvent, BeforeQueryEvent } from 'typeorm/subscriber/event/QueryEvent';
import type { Config, TracingSettings } from './config';
import { requestScope, type RequestScope } from './request-context';

/** The span attribute that says whether the incoming request's caller may decide its sampling. */
export const TRUSTED_PARENT_ATTRIBUTE = 'trace.parent_trusted';

/** The names Express's trust-proxy setting knows, as subnets. */
const NAMED_SUBNETS: Record<string, [string, number, 'ipv4' | 'ipv6'][]> = {
  loopback: [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ],
  linklocal: [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ],
  uniquelocal: [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    ['fc00::', 7, 'ipv6'],
  ],
};

/** TRACE_TRUST_PARENT as a block list: `loopback`, `linklocal`, `uniquelocal`, addresses and CIDRs. Throws on anything else. */
export function trustedCallers(list: string[]): net.BlockList {
  const blocks = new net.BlockList();
  for (const entry of list) {
    const named = Object.hasOwn(NAMED_SUBNETS, entry) ? NAMED_SUBNETS[entry] : undefined;
    if (named) {
      for (const [address, prefix, type] of named) blocks.addSubnet(address, prefix, type);
      continue;
    }
    const [address, prefix] = entry.split('/');
    const version = net.isIP(address);
    const bits = prefix === undefined ? (version === 6 ? 128 : 32) : Number(prefix);
    if (!version || !Number.isInteger(bits) || bits < 0 || bits > (version === 6 ? 128 : 32))
      throw new Error(`"${entry}" is not an address, a CIDR or loopback/linklocal/uniquelocal`);
    blocks.addSubnet(address, bits, version === 6 ? 'ipv6' : 'ipv4');
  }
  return blocks;
}

/** Whether a request presents the hop secret (lib/hop.ts `HopSecret`). */
export interface HopSecretCheck {
  presentedBy(headers: http.IncomingHttpHeaders): boolean;
}

/**
 * Whether a request's caller is trusted with its sampled flag: one of TRACE_TRUST_PARENT, or a
 * hop of this service (it presents the hop secret, SUBGRAPH_SECRET), wherever it runs.
 */
export function traceParentTrust(list: string[], hop?: HopSecretCheck): (req: http.IncomingMessage) => boolean {
  const byAddress = traceParentTrustByAddress(list);
  return hop ? (req) => hop.presentedBy(req.headers) || byAddress(req) : byAddress;
}

function traceParentTrustByAddress(list: string[]): (req: http.IncomingMessage) => boolean {
  if (!list.length) return () => false;
  const blocks = trustedCallers(list);
  return (req) => {
    const address = req.socket?.remoteAddress?.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
    const version = address ? net.isIP(address) : 0;
    return version !== 0 && blocks.check(address!, version === 6 ? 'ipv6' : 'ipv4');
  };
}

/** W3C trace-context version 00: trace id, parent span id, flags (lower-case hex, ids not all zero). */
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export interface TraceParent {
  traceId: string;
  spanId: string;
  sampled: boolean;
}

/** A `traceparent` header's trace, or undefined when there is none or it is malformed (a new trace then starts). */
export function parseTraceParent(value: string | string[] | undefined): TraceParent | undefined {
  const m = typeof value === 'string' ? TRACEPARENT.exec(value) : null;
  if (!m || m[1] === ZERO_TRACE || m[2] === ZERO_SPAN) return undefined;
  return { traceId: m[1], spanId: m[2], sampled: (parseInt(m[3], 16) & 1) === 1 };
}

/**
 * Whether this process records a request: with a parent-based sampler (parentbased_*, the
 * default) a trusted caller's sampled flag is followed; otherwise (no caller's trace, a caller
 * not trusted, or always_on / always_off / traceidratio) a draw at `ratio`. The draw is random,
 * not the trace id's as the specification's traceidratio would take it: a caller chooses its
 * trace id, so it must not choose the draw.
 */
export function sampledFor(
  ratio: number,
  parent: TraceParent | undefined,
  trusted: boolean,
  parentBased = true,
): boolean {
  if (parent && trusted && parentBased) return parent.sampled;
  return ratio >= 1 || (ratio > 0 && Math.random() < ratio);
}

/**
 * Random lower-case hex, from a pool of random bytes refilled 4 KiB at a time: ids must be unique
 * and unguessable enough not to collide, and are made for every traced request.
 */
const randomPool = Buffer.allocUnsafe(4096);
let poolAt = randomPool.length;
function randomHex(bytes: number): string {
  if (poolAt + bytes > randomPool.length) {
    crypto.randomFillSync(randomPool);
    poolAt = 0;
  }
  const hex = randomPool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}
const newTraceId = (): string => {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
};
const newSpanId = (): string => {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
};

/** The trace a piece of work runs in: the request's, then each span's that has children. */
export class TraceScope implements RequestScope {
  constructor(
    readonly traceId: string,
    /** The span this work runs in: the parent of the spans it makes, and the caller id of the next hop. */
    readonly spanId: string,
    readonly sampled: boolean,
  ) {}

  /** This scope as a W3C `traceparent` value, for the next hop or a job run later. */
  get traceParent(): string {
    return `00-${this.traceId}-${this.spanId}-${this.sampled ? '01' : '00'}`;
  }
}

/** Span kinds as OpenTelemetry numbers them (@opentelemetry/api SpanKind). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2 } as const;
type Kind = (typeof SpanKind)[keyof typeof SpanKind];

// Span times in performance.now() milliseconds (doubles: BigInt arithmetic was most of the cost of
// making a span), as OpenTelemetry's [seconds, nanoseconds] since the epoch when they end.
const PERF_EPOCH_MS = performance.timeOrigin;
const HR_AT_START = process.hrtime.bigint();
const PERF_AT_START = performance.now();
/** A process.hrtime.bigint() reading (an operation's start) on performance.now()'s scale. */
const perfMs = (hr: bigint): number => PERF_AT_START + Number(hr - HR_AT_START) / 1e6;
const hrTime = (ms: number): HrTime => {
  const epochMs = PERF_EPOCH_MS + ms;
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
};

/** Set while tracing is on: where ended spans go, and what they say about this process. */
let exporter: { processor: SpanProcessor; resource: Resource; sampler: TracingSettings['sampler'] } | undefined;
const SCOPE = { name: 'federated-auth-voice' };
// Spans record no events, and only a job's has links: one shared empty list each (never written).
const NO_EVENTS: [] = [];
const NO_LINKS: Link[] = [];

/**
 * One recorded span of a sampled trace, exported as OpenTelemetry's ReadableSpan when it ends.
 * Made only for sampled work, with its ids, its times and what it says: nothing is made per
 * unsampled request.
 */
export class Span implements ReadableSpan {
  readonly scope: TraceScope;
  readonly parentSpanContext: SpanContext | undefined;
  readonly attributes: Attributes;
  readonly links: Link[];
  readonly events = NO_EVENTS;
  readonly resource = exporter!.resource;
  readonly instrumentationScope = SCOPE;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  status: SpanStatus = { code: 0 };
  startTime: HrTime;
  endTime: HrTime = [0, 0];
  ended = false;
  private readonly started: number;
  private context: SpanContext | undefined;
  private finished = 0;

  constructor(
    public name: string,
    readonly kind: Kind,
    parent: { traceId: string; spanId: string } | undefined,
    attributes: Attributes = {},
    options: { start?: bigint; traceId?: string; links?: Link[]; remoteParent?: boolean } = {},
  ) {
    this.scope = new TraceScope(parent?.traceId ?? options.traceId ?? newTraceId(), newSpanId(), true);
    this.parentSpanContext = parent && {
      traceId: parent.traceId,
      spanId: parent.spanId,
      traceFlags: 1,
      isRemote: options.remoteParent ?? false,
    };
    this.attributes = attributes;
    this.links = options.links ?? NO_LINKS;
    this.started = options.start === undefined ? performance.now() : perfMs(options.start);
    this.startTime = hrTime(this.started);
  }

  spanContext(): SpanContext {
    return (this.context ??= { traceId: this.scope.traceId, spanId: this.scope.spanId, traceFlags: 1 });
  }

  get duration(): HrTime {
    const ms = Math.max(0, this.finished - this.started);
    const seconds = Math.floor(ms / 1000);
    return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
  }

  /** Marks the span failed (OpenTelemetry's ERROR status), with what went wrong. */
  fail(message: string | undefined, err?: unknown): void {
    this.status = message === undefined ? { code: 2 } : { code: 2, message: message.slice(0, 500) };
    if (err instanceof Error) this.attributes['error.type'] = err.name === 'Error' ? err.constructor.name : err.name;
  }

  /** Ends the span (once) and hands it to the exporter. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.finished = performance.now();
    this.endTime = hrTime(this.finished);
    exporter?.processor.onEnd(this);
  }
}

/** Whether this process traces (startTracing was called with settings: an endpoint set, not disabled). */
export const tracingEnabled = (): boolean => exporter !== undefined;

/** The trace scope of the work running now, if tracing is on and it belongs to one. */
export const currentScope = (): RequestScope | undefined => (exporter ? requestScope.getStore() : undefined);

/** Whether the work running now is in a sampled trace: test it before building a span's attributes. */
export const recording = (): boolean => currentScope()?.sampled === true;

/**
 * A span for work done now within the current scope, or undefined when there is nothing to
 * record (tracing off, no scope, or a trace not sampled). Run its children in `span.scope`.
 */
export function startSpan(name: string, kind: Kind, attributes?: Attributes, start?: bigint): Span | undefined {
  const scope = currentScope();
  return scope?.sampled ? new Span(name, kind, scope, attributes, { start }) : undefined;
}

/** Runs `work` in a span of the current trace (when it is sampled): its status says whether `work` threw. */
export async function inSpan<T>(
  name: string,
  kind: Kind,
  attributes: Attributes | undefined,
  work: () => Promise<T>,
): Promise<T> {
  const span = startSpan(name, kind, attributes);
  if (!span) return work();
  try {
    return await requestScope.run(span.scope, work);
  } catch (err) {
    span.fail((err as Error)?.message, err);
    throw err;
  } finally {
    span.end();
  }
}

/** What the process edge needs: who may decide sampling (set with the exporter). */
let trustedCaller: (req: http.IncomingMessage) => boolean = () => false;

/**
 * The edge of this process, for one request: its scope (the caller's trace id kept, a new one
 * otherwise) and, when sampled, its server span, ended when the response closes with `route` (the
 * matched route template) and the status. Undefined when tracing is off.
 */
export function serveTraced<Req extends http.IncomingMessage>(
  req: Req,
  res: http.ServerResponse,
  route: (req: Req) => string,
): TraceScope | undefined {
  if (!exporter) return undefined;
  const parent = parseTraceParent(req.headers.traceparent);
  const trusted = parent !== undefined && trustedCaller(req);
  const { ratio, parentBased } = exporter.sampler;
  if (!sampledFor(ratio, parent, trusted, parentBased))
    return new TraceScope(parent?.traceId ?? newTraceId(), newSpanId(), false);
  const method = req.method ?? 'GET';
  const span = new Span(
    method,
    SpanKind.SERVER,
    parent,
    { 'http.request.method': method, [TRUSTED_PARENT_ATTRIBUTE]: trusted },
    { remoteParent: true },
  );
  res.once('close', () => {
    // A listener that threw here would end the process: the span is ended whatever the label.
    let template = 'unmatched';
    try {
      template = route(req);
    } catch {
      // keep 'unmatched'
    }
    span.name = `${method} ${template}`;
    span.attributes['http.route'] = template;
    span.attributes['http.response.status_code'] = res.statusCode;
    // A server span fails on a 5xx (OpenTelemetry's HTTP conventions), or when the answer was cut off.
    if (res.statusCode >= 500) span.fail(undefined);
    else if (!res.writableFinished) span.fail('the response was not finished');
    span.end();
  });
  return span.scope;
}

/** A statement span's key: the parameters array TypeORM hands both its query events (one per query call). */
type StatementKey = object;

/** Each traced data source's name (`auth`, `tts`) and system, for its statements' spans. */
const tracedDatabases = new WeakMap<DataSource, { database: string; system: 'mysql' | 'sqlite' }>();

function statementSpan(database: string, system: string, sql: string): Span {
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
  return startSpan(`${operation} ${database}`, SpanKind.CLIENT, {
    'db.system.name': system,
    'db.namespace': database,
    'db.operation.name': operation,
    'db.query.text': sql.length > 2000 ? `${sql.slice(0, 2000)}…` : sql,
  })!;
}

/** A statement failed: the driver's error code only, as a driver's message may quote a value. */
function failStatement(span: Span, err: unknown): void {
  const code = (err as { code?: unknown } | undefined)?.code;
  span.fail(typeof code === 'string' ? code : 'the statement failed');
}

/**
 * Makes a span of each statement `dataSource` runs in a sampled trace: its text as it is sent
 * (with placeholders: the values are never in it, nor in the error status). TypeORM's statements
 * through a subscriber; the project's own reads past TypeORM (lib/database/driver.ts) through
 * `inStatementSpan`.
 */
export function traceStatements(dataSource: DataSource, database: string): void {
  if (!exporter) return;
  const system = dataSource.options.type === 'mysql' ? 'mysql' : 'sqlite';
  tracedDatabases.set(dataSource, { database, system });
  const open = new WeakMap<StatementKey, Span>();
  const withoutParameters = new Map<string, Span[]>(); // statements run without a parameters array
  const subscriber: EntitySubscriberInterface = {
    beforeQuery(event: BeforeQueryEvent) {
      if (!recording()) return;
      const span = statementSpan(database, system, event.query);
      if (event.parameters && typeof event.parameters === 'object') open.set(event.parameters, span);
      else withoutParameters.set(event.query, [...(withoutParameters.get(event.query) ?? []), span]);
    },
    afterQuery(event: AfterQueryEvent) {
      let span: Span | undefined;
      if (event.parameters && typeof event.parameters === 'object') {
        span = open.get(event.parameters);
        open.delete(event.parameters);
      } else {
        const waiting = withoutParameters.get(event.query);
        span = waiting?.shift();
        if (waiting && !waiting.length) withoutParameters.delete(event.query);
      }
      if (!span) return;
      if (!event.success) failStatement(span, event.error);
      span.end();
    },
  };
  dataSource.subscribers.push(subscriber);
}

/** Runs one of the project's own statements (past TypeORM) in a span, when the trace is sampled. */
export function inStatementSpan<T>(dataSource: DataSource, sql: string, work: () => Promise<T>): Promise<T> {
  const traced = recording() ? tracedDatabases.get(dataSource) : undefined;
  if (!traced) return work();
  const span = statementSpan(traced.database, traced.system, sql);
  return work().then(
    (rows) => {
      span.end();
      return rows;
    },
    (err: unknown) => {
      failStatement(span, err);
      span.end();
      throw err;
    },
  );
}

/** The current trace as a `traceparent` value, to store with work done later (a synthesis job). */
export function currentTraceParent(): string | null {
  return currentScope()?.traceParent ?? null;
}

/**
 * Runs `work` in a span of its own trace, linked to the trace stored by currentTraceParent():
 * a job runs long after the request that queued it, so it is a new trace, not a child. Sampled
 * by the process's own rule.
 */
export async function inLinkedSpan<T>(
  name: string,
  traceParent: string | null | undefined,
  attributes: Record<string, string | number>,
  work: () => Promise<T>,
): Promise<T> {
  if (!exporter) return work();
  if (!sampledFor(exporter.sampler.ratio, undefined, false))
    return requestScope.run(new TraceScope(newTraceId(), newSpanId(), false), work);
  const linked = parseTraceParent(traceParent ?? undefined);
  const span = new Span(name, SpanKind.INTERNAL, undefined, attributes, {
    links: linked
      ? [{ context: { traceId: linked.traceId, spanId: linked.spanId, traceFlags: linked.sampled ? 1 : 0 } }]
      : [],
  });
  try {
    return await requestScope.run(span.scope, work);
  } catch (err) {
    span.fail((err as Error)?.message, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Starts tracing with the configuration's OpenTelemetry settings (nothing when `config.tracing`
 * is null), once per process and before its databases open: `service` is the process's kind
 * (`gateway`, `facade`, `subgraph-tts`, `worker`, `all-in-one`), its `service.name` unless
 * OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES says otherwise. `hop` recognises this service's
 * own hops, whose sampled flag is believed as TRACE_TRUST_PARENT's callers' is.
 */
export function startTracing(config: Config, service: string, hop?: HopSecretCheck): void {
  const settings = config.tracing;
  if (!settings || exporter) return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  // Loaded only when tracing is on: a process without it does not pay for the SDK's modules.
  const { BatchSpanProcessor } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { OTLPTraceExporter } = (
    settings.protocol === 'http/json'
      ? require('@opentelemetry/exporter-trace-otlp-http')
      : require('@opentelemetry/exporter-trace-otlp-proto')
  ) as typeof import('@opentelemetry/exporter-trace-otlp-http');
  /* eslint-enable @typescript-eslint/no-require-imports */
  trustedCaller = traceParentTrust(config.TRACE_TRUST_PARENT, hop);
  exporter = {
    // OTEL_BSP_* (the batch's size and delay) and OTEL_EXPORTER_OTLP_TIMEOUT are read by the SDK itself.
    processor: new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url, headers: settings.headers })),
    resource: resourceFromAttributes({ 'service.name': service, ...settings.resource }),
    sampler: settings.sampler,
  };
}

/** Sends the spans still buffered: called once on shutdown. */
export async function stopTracing(): Promise<void> {
  await exporter?.processor.shutdown().catch(() => undefined);
}
