// An OTLP/HTTP collector for tests: a small HTTP server that decodes the JSON export
// (POST /v1/traces) the way a collector reads it, and keeps every span it is sent.
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Attr = { key: string; value: Record<string, unknown> };

export interface ReceivedSpan {
  service: string;
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

const attrs = (list: Attr[] = []) => Object.fromEntries(list.map((a) => [a.key, Object.values(a.value)[0]]));

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Export requests received, and any body that did not decode. */
  exports: number;
  undecoded: string[];
  close(): Promise<void>;
}

export async function otlpReceiver(): Promise<OtlpReceiver> {
  const receiver = { spans: [] as ReceivedSpan[], exports: 0, undecoded: [] as string[] };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.method === 'POST') {
        receiver.exports++;
        try {
          const payload = JSON.parse(body) as { resourceSpans?: any[] };
          for (const rs of payload.resourceSpans ?? []) {
            const service = String(attrs(rs.resource?.attributes)['service.name']);
            for (const ss of rs.scopeSpans ?? []) {
              for (const s of ss.spans ?? []) {
                receiver.spans.push({
                  service,
                  traceId: s.traceId,
                  spanId: s.spanId,
                  parentSpanId: s.parentSpanId || undefined,
                  name: s.name,
                  kind: s.kind,
                  attributes: attrs(s.attributes),
                  status: s.status ?? {},
                  links: (s.links ?? []).map((l: any) => ({ traceId: l.traceId, spanId: l.spanId })),
                  startTimeUnixNano: String(s.startTimeUnixNano),
                  endTimeUnixNano: String(s.endTimeUnixNano),
                });
              }
            }
          }
        } catch {
          receiver.undecoded.push(body.slice(0, 200));
        }
      }
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
