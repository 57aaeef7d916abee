// An OTLP/HTTP collector for tests: a small HTTP server that decodes the export the way a
// collector reads it, JSON or protobuf by its Content-Type (the protobuf with its own reading of
// OTLP's trace messages below, through protobufjs, not with the exporter's code), and keeps every
// span it is sent, with the path, headers and encoding of each export.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';

/** OTLP's trace export (opentelemetry-proto, collector/trace/v1 and what it uses), the fields these tests read. */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message AnyValue {
  oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9;
  repeated Link links = 13; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;
const ExportTraceServiceRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

/** A protobuf export as OTLP/JSON spells it (hex ids, lowerCamelCase names). */
function fromProtobuf(body: Buffer): { resourceSpans?: any[] } {
  return ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
    longs: String,
    bytes: String,
    oneofs: false,
    defaults: false,
    arrays: true,
  });
}
/** Ids: hex in JSON, bytes (here base64) in protobuf. */
const hexId = (id: unknown): string =>
  typeof id !== 'string' ? '' : /^[0-9a-f]*$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex');

type Attr = { key: string; value: Record<string, unknown> };

export interface ReceivedSpan {
  service: string;
  /** The resource's attributes (service.name included). */
  resource: Record<string, unknown>;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP's status: code 2 is ERROR. */
  status: { code?: number; message?: string };
  links: { traceId: string; spanId: string }[];
  startTimeUnixNano: string;
  endTimeUnixNano: string;
}

export const SERVER = 2;
export const CLIENT = 3;
export const ERROR = 2;

/** Attribute values as JavaScript values: an int64 arrives as a string (protobuf's and JSON's long). */
const attrs = (list: Attr[] = []) =>
  Object.fromEntries(
    list.map((a) => [
      a.key,
      'intValue' in (a.value ?? {}) ? Number(a.value.intValue) : Object.values(a.value ?? {})[0],
    ]),
  );

export interface ReceivedExport {
  path: string;
  headers: http.IncomingHttpHeaders;
  encoding: 'json' | 'protobuf' | 'other';
  spans: number;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request received, on any path. */
  requests: ReceivedExport[];
  /** Export requests received, and any body that did not decode. */
  exports: number;
  undecoded: string[];
  close(): Promise<void>;
}

/** `path`: where exports are taken (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT may name another). */
export async function otlpReceiver(path = '/v1/traces'): Promise<OtlpReceiver> {
  const receiver = {
    spans: [] as ReceivedSpan[],
    requests: [] as ReceivedExport[],
    exports: 0,
    undecoded: [] as string[],
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const type = String(req.headers['content-type'] ?? '');
      const encoding = type.startsWith('application/json')
        ? 'json'
        : type.startsWith('application/x-protobuf')
          ? 'protobuf'
          : 'other';
      const before = receiver.spans.length;
      if (req.url === path && req.method === 'POST') {
        receiver.exports++;
        try {
          const payload =
            encoding === 'protobuf'
              ? fromProtobuf(raw)
              : (JSON.parse(raw.toString('utf8')) as { resourceSpans?: any[] });
          for (const rs of payload.resourceSpans ?? []) {
            const resource = attrs(rs.resource?.attributes);
            const service = String(resource['service.name']);
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                receiver.spans.push({
                  service,
                  resource,
                  traceId: hexId(s.traceId),
                  spanId: hexId(s.spanId),
                  parentSpanId: hexId(s.parentSpanId) || undefined,
                  name: s.name,
                  kind: s.kind,
                  attributes: attrs(s.attributes),
                  status: s.status ?? {},
                  links: (s.links ?? []).map((l: any) => ({ traceId: hexId(l.traceId), spanId: hexId(l.spanId) })),
                  startTimeUnixNano: String(s.startTimeUnixNano),
                  endTimeUnixNano: String(s.endTimeUnixNano),
                });
              }
            }
          }
        } catch {
          receiver.undecoded.push(raw.subarray(0, 200).toString(encoding === 'protobuf' ? 'hex' : 'utf8'));
        }
      }
      receiver.requests.push({
        path: req.url ?? '',
        headers: req.headers,
        encoding,
        spans: receiver.spans.length - before,
      });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

/** A W3C `traceparent` of a caller: its trace id, its span id and the header. */
export function callerTrace(sampled: boolean): { traceId: string; spanId: string; traceparent: string } {
  const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-${sampled ? '01' : '00'}` };
}
