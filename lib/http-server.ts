// Listening, and stopping gracefully: stop accepting, let in-flight requests finish, then close.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RequestListener } from 'node:http';
import pino from 'pino';
import { Config, ConfigError, loadConfig } from './config';
import { createLogger } from './logger';
import { metricsHandler } from './metrics';
import { HopSecret } from './hop';
import { collectStartupGarbage } from './heap';
import { startTracing, stopTracing } from './tracing';
import { closeBlobStores } from './blob-store';

export interface HttpServer {
  server: http.Server;
  url: string;
  /** The address and port actually bound (`0.0.0.0:8080`), for the ready line. */
  address: string;
  close(graceMs?: number): Promise<void>;
}

export function listen(handler: RequestListener, port: number, host: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(requestClasses(handler), handler);
    server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
    // Connections that have not sent a request yet (clients open them ahead, e.g. undici after
    // an aborted stream). closeIdleConnections() leaves them, and they would hold a graceful close.
    const awaitingFirstRequest = new Set<Socket>();
    server.on('connection', (socket: Socket) => {
      awaitingFirstRequest.add(socket);
      socket.once('close', () => awaitingFirstRequest.delete(socket));
    });
    // Once closing, a connection whose response is done is ended instead of kept alive.
    let closing = false;
    const open = new Set<http.ServerResponse>();
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      awaitingFirstRequest.delete(req.socket);
      open.add(res);
      res.once('close', () => open.delete(res));
      res.once('finish', () => closing && req.socket.end());
    });
    // A request the HTTP parser cannot read still gets the error object (Node's default: a bare 400).
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      // As Node's own handler: an answer only on a connection that has had none (bytes after a
      // `Connection: close` request, say, must not get a second response).
      if (!socket.writable || socket.bytesWritten > 0 || err.code === 'ECONNRESET') return void socket.destroy();
      if (err.code === 'HPE_HEADER_OVERFLOW' || err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : 408;
        return void socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nConnection: close\r\n\r\n`);
      }
      const body = JSON.stringify({
        error: 'validation_error',
        message: 'The request could not be read: a bad request line, header or body framing.',
      });
      const head = /^HEAD /.test(String((err as { rawPacket?: Buffer }).rawPacket ?? '')); // the answer to a HEAD has no body
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${head ? '' : body}`,
      );
    });
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: actual, address: bound } = server.address() as AddressInfo;
      const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
      resolve({
        server,
        url: `http://${shownHost}:${actual}`,
        address: bound.includes(':') ? `[${bound}]:${actual}` : `${bound}:${actual}`,
        close: (graceMs = 10_000) =>
          new Promise<void>((done) => {
            closing = true;
            endEventStreams(open);
            const force = setTimeout(() => server.closeAllConnections(), graceMs).unref();
            server.close(() => {
              clearTimeout(force);
              done();
            });
            server.closeIdleConnections();
            for (const socket of awaitingFirstRequest) socket.destroy();
          }),
      });
    });
  });
}

/**
 * For an Express app: requests and responses made with the app's own prototypes from the start.
 * Express otherwise swaps the prototype of both objects on every request (Object.setPrototypeOf),
 * after which V8 reads their properties the slow way, in Node's HTTP code as in Express's: about
 * a quarter of the CPU of a session read (issue 14). Express's swap is then a no-op.
 */
function requestClasses(handler: RequestListener): http.ServerOptions {
  const app = handler as Partial<Record<'request' | 'response', object>>;
  if (!app.request || !app.response || !callable(http.IncomingMessage) || !callable(http.ServerResponse)) return {};
  return {
    IncomingMessage: madeWith(http.IncomingMessage, app.request) as typeof http.IncomingMessage,
    ServerResponse: madeWith(http.ServerResponse, app.response) as typeof http.ServerResponse,
  };
}

/** Node's constructors are plain functions (a class could not be called with `apply`). */
const callable = (f: Function) => !Function.prototype.toString.call(f).startsWith('class');

/**
 * A constructor that builds what `base` builds, with `prototype` as the object's prototype.
 * (`Reflect.construct` with a new target does the same, but measured slower: the objects it makes
 * do not get the fast shape.)
 */
function madeWith(base: Function, prototype: object): Function {
  function Made(this: object, ...args: unknown[]) {
    base.apply(this, args);
  }
  Made.prototype = prototype;
  return Made;
}

/** The comment that ends every open event stream when the process stops (EventSource then reconnects elsewhere). */
export const SHUTDOWN_COMMENT = ': server shutting down\n\n';

const isEventStream = (res: http.ServerResponse) =>
  String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');

/**
 * Ends the Server-Sent Events responses still open: a final comment, then the end of the
 * response. Whoever wrote to them (the facade's bridge, graphql-sse) sees them closed and stops;
 * they never finish by themselves, so waiting for them would hold the shutdown to its grace.
 */
function endEventStreams(open: Set<http.ServerResponse>): void {
  for (const res of open) {
    if (!res.headersSent || res.writableEnded || !isEventStream(res)) continue;
    res.on('error', () => undefined); // a late write of the stream's owner must not crash the stop
    res.end(SHUTDOWN_COMMENT);
  }
}

/** Runs `stop` once on SIGTERM or SIGINT, then exits. */
export function onShutdownSignal(stop: () => Promise<void>, log: (msg: string) => void): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal} received: shutting down`);
    stop()
      .then(() => process.exit(0))
      .catch(() => process.exit(1));
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}

/**
 * What an operator reads when a process cannot start: one line naming the cause (port in use,
 * database unreachable with its host, migration failed with its name, a setting missing).
 * The stack is printed too only at LOG_LEVEL=debug or trace.
 */
export function startupFailure(err: unknown, port?: number): string {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.code === 'EADDRINUSE')
    return `port ${e.port ?? port} is already in use${e.address ? ` on ${e.address}` : ''}; stop the other process or set PORT`;
  if (e?.code === 'EACCES' && e.syscall === 'listen')
    return `no permission to listen on port ${e.port ?? port}; use a port above 1023 or set PORT`;
  if (e?.code === 'EADDRNOTAVAIL') return `cannot listen on ${e.address}: no such address here; set HOST`;
  // A setting found wrong at start (e.g. a guessable bootstrap password) names each problem.
  if (err instanceof ConfigError)
    return err.message
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .join(' ');
  return (err instanceof Error ? err.message : String(err)).split('\n')[0];
}

/**
 * The main of every entry point: read the configuration (a bad value exits 2 with the
 * message), start (a failure exits 1 with one line), and stop gracefully on SIGTERM/SIGINT.
 */
export function runService(
  start: (config: Config) => Promise<{ close(): Promise<void> }>,
  /** The process's kind: its spans' service.name unless OTEL_SERVICE_NAME says otherwise. */
  service: string,
): void {
  // Failures to start are JSON lines like every other log line, on standard error, written
  // before the process exits.
  const failure = pino({ base: undefined }, pino.destination({ dest: 2, sync: true }));
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) failure.fatal(err.message);
    else failure.fatal({ err }, 'invalid configuration');
    process.exit(2);
  }
  const logger = createLogger(config);
  // Before anything opens a database or serves a request: both are traced from the start.
  startTracing(config.tracing, {
    service,
    trustParent: config.TRACE_TRUST_PARENT,
    hop: new HopSecret(config.SUBGRAPH_SECRET),
  });
  // One metrics server per process, whatever the process serves (METRICS_PORT).
  const metrics =
    config.METRICS_PORT === undefined || !config.METRICS_ENABLED
      ? undefined
      : http
          .createServer((req, res) => (req.url === '/metrics' ? metricsHandler(req, res) : res.writeHead(404).end()))
          .listen(config.METRICS_PORT, config.HOST);
  start(config).then(
    (service) => {
      collectStartupGarbage();
      onShutdownSignal(
        async () => {
          metrics?.close();
          await service.close();
          // After every module has stopped: they write blobs until then.
          await closeBlobStores();
          await stopTracing();
        },
        (message) => logger.info(message),
      );
    },
    (err) => {
      const debug = config.LOG_LEVEL === 'debug' || config.LOG_LEVEL === 'trace';
      failure.fatal(debug ? { err } : {}, `failed to start: ${startupFailure(err, config.PORT)}`);
      process.exit(1);
    },
  );
}
