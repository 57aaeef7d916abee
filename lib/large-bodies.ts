// JSON request bodies, in one place for every process (the facade's routes and its speech
// endpoint, the hop's receiving end of the gateway and the subgraphs, /graphql/stream): a body up
// to LARGE_BODY_BYTES is parsed as Express does; a larger one (a 14 MiB vault capture, an 8 MiB
// hub import) first has to be admitted, and is parsed in a thread of its own (issue 41):
// - a process-wide budget of bytes in flight (LARGE_BODY_BUDGET_BYTES): twenty 13 MiB captures at
//   once took a process from 437 to 1,313 MiB; beyond it 503 with Retry-After, before any byte is read;
// - LARGE_BODIES_PER_USER of one caller at once (the token's user, an API key, else the client
//   address; the token is not verified here, the operation does that): beyond, 429 with Retry-After;
// - JSON.parse of the whole text in a worker thread with a time limit (lib/kit/timed-thread.ts, as
//   subgraphs/vault/parser-thread.ts runs pages), so that parsing many MiB never holds the event loop.
// A body's bytes count from its Content-Length, or the route's limit when it has none or is
// compressed (what it inflates to is not known before it is read).
import crypto from 'node:crypto';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Config } from './config';
import { AppError, ERROR_STATUS, errorHeaders } from './errors';
import { errorResult } from './graphql-errors';
import { sendJson } from './http-app';
import { TimedThread } from './kit/timed-thread';

export type LargeBodyConfig = Pick<
  Config,
  'LARGE_BODY_BYTES' | 'LARGE_BODY_BUDGET_BYTES' | 'LARGE_BODIES_PER_USER' | 'LARGE_BODY_PARSE_TIMEOUT_MS'
>;

/** How a refusal is answered: GraphQL's error shape by default, the facade's error object there. */
export type Refuse = (res: Response, error: AppError) => void;

/** Seconds a refused caller is told to wait: a large body takes about that to read and parse. */
const RETRY_AFTER_SECONDS = 2;

const refuseAsGraphQL: Refuse = (res, error) => {
  if (res.headersSent) return;
  res.setHeaders(new Map(Object.entries(errorHeaders(error.code, error.retryAfter))));
  sendJson(res, ERROR_STATUS[error.code], errorResult(error));
};

/** The large bodies in flight in this process: one ledger per configuration (one per process outside tests). */
export class LargeBodyAdmission {
  private inFlight = 0;
  private readonly perCaller = new Map<string, number>();

  constructor(private readonly config: LargeBodyConfig) {}

  /** Bytes of large bodies admitted and not yet finished. */
  get bytesInFlight(): number {
    return this.inFlight;
  }

  /** The release of an admitted body (idempotent), or the refusal. */
  admit(caller: string, bytes: number): (() => void) | AppError {
    const { LARGE_BODIES_PER_USER: perUser, LARGE_BODY_BUDGET_BYTES: budget } = this.config;
    const mine = this.perCaller.get(caller) ?? 0;
    if (mine >= perUser)
      return new AppError(
        'rate_limit_exceeded',
        `At most ${perUser} large request bodies of one caller at once (LARGE_BODIES_PER_USER); send the next when one has finished.`,
        { limit: 'LARGE_BODIES_PER_USER', max: perUser },
        RETRY_AFTER_SECONDS,
      );
    // One body larger than the whole budget still passes alone.
    if (this.inFlight > 0 && this.inFlight + bytes > budget)
      return new AppError(
        'service_unavailable',
        'Too many large request bodies are being read at once (LARGE_BODY_BUDGET_BYTES); try again shortly.',
        undefined,
        RETRY_AFTER_SECONDS,
      );
    this.inFlight += bytes;
    this.perCaller.set(caller, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight -= bytes;
      const left = (this.perCaller.get(caller) ?? 1) - 1;
      if (left > 0) this.perCaller.set(caller, left);
      else this.perCaller.delete(caller);
    };
  }
}

const admissions = new WeakMap<object, LargeBodyAdmission>();
const parsers = new WeakMap<object, TimedThread>();
/** The process's ledger: every parser made with this configuration shares it. */
export function largeBodyAdmission(config: LargeBodyConfig): LargeBodyAdmission {
  let admission = admissions.get(config);
  if (!admission) admissions.set(config, (admission = new LargeBodyAdmission(config)));
  return admission;
}
function parserOf(config: LargeBodyConfig): TimedThread {
  let parser = parsers.get(config);
  if (!parser) parsers.set(config, (parser = jsonParserThread(config.LARGE_BODY_PARSE_TIMEOUT_MS)));
  return parser;
}

/** Who sends a body, for the per-caller limit: the token's subject (unverified), an API key's hash, else the address. */
export function bodyCaller(req: Pick<Request, 'headers' | 'ip' | 'socket'>): string {
  const m = /^Bearer\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
  if (m) {
    const token = m[1];
    if (token.startsWith('fvk_')) return `key:${crypto.createHash('sha256').update(token).digest('base64url')}`;
    const payload = token.split('.')[1];
    if (payload && payload.length < 8192) {
      try {
        const sub = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sub?: unknown }).sub;
        if (typeof sub === 'string' && sub.length <= 200) return `user:${sub}`;
      } catch {
        // not a JWT: the address below
      }
    }
  }
  return `address:${req.ip ?? req.socket.remoteAddress ?? ''}`;
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/**
 * The JSON body parser of every process, up to `limit` bytes. Errors are Express's body parser's
 * (413, 400, 415: each app answers them as before); refusals of admission are answered with `refuse`.
 */
export function jsonBody(config: LargeBodyConfig, limit: number, refuse: Refuse = refuseAsGraphQL): RequestHandler {
  const small = express.json({ limit });
  // A route that takes no large body never reaches the large path.
  if (limit <= config.LARGE_BODY_BYTES) return small;
  const raw = express.raw({ type: () => true, limit });
  return (req, res, next) => {
    const length = req.headers['content-length'];
    const declared = length === undefined ? undefined : Number(length);
    const encoded = String(req.headers['content-encoding'] ?? 'identity').toLowerCase() !== 'identity';
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(String(req.headers['content-type'] ?? ''))?.[1];
    if (
      !req.is(JSON_TYPES) ||
      declared === 0 ||
      (!encoded && declared !== undefined && declared <= config.LARGE_BODY_BYTES) ||
      // Express's parser answers these as it always has: too large before reading, a charset it does not read.
      (declared !== undefined && declared > limit) ||
      (charset !== undefined && charset.toLowerCase() !== 'utf-8')
    )
      return small(req, res, next);
    const bytes = encoded || declared === undefined || !Number.isFinite(declared) ? limit : declared;
    const admitted = largeBodyAdmission(config).admit(bodyCaller(req), bytes);
    if (admitted instanceof AppError) return refuse(res, admitted);
    res.once('close', admitted);
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      const body: unknown = req.body;
      if (!Buffer.isBuffer(body) || body.length === 0) {
        req.body = {};
        return next();
      }
      parseInThread(parserOf(config), body).then(
        (value) => {
          req.body = value;
          next();
        },
        (e: unknown) => {
          if (e instanceof AppError) return refuse(res, e);
          // As Express's parser says it: answered 400 by each app's handler.
          next(
            Object.assign(new Error(String((e as Error)?.message ?? e)), {
              status: 400,
              type: 'entity.parse.failed',
            }),
          );
        },
      );
    });
  };
}

/**
 * The thread's code, as source text (it runs outside any module loader of the caller). Express's
 * strict JSON: an object or an array at the top.
 */
const JSON_THREAD = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, bytes }) => {
  try {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
    const first = /^[\\s\\uFEFF]*(\\S)/.exec(text)?.[1];
    if (first !== '{' && first !== '[') throw new Error('the body is not a JSON object or array');
    parentPort.postMessage({ id, result: JSON.parse(text) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err) });
  }
});
`;

/**
 * One parsing thread (lib/kit/timed-thread.ts): a parse that overruns its time fails, and the
 * parses queued behind it with it (they were held up as long).
 */
export function jsonParserThread(timeoutMs: number): TimedThread {
  return new TimedThread({
    source: JSON_THREAD,
    resourceLimits: { maxOldGenerationSizeMb: 1024, stackSizeMb: 8 },
    timeoutMs,
    queued: 'fail',
    overrun: (ms) => unavailable(`parsing the request body took more than ${ms} ms`),
    failed: (message) => new Error(`The request body is not valid JSON: ${message}`),
    stopped: (reason) => unavailable(`the parsing thread stopped (${reason})`),
  });
}

/** The JSON value of `bytes` (handed over to the thread: the caller must not use them again). */
export function parseInThread(parser: TimedThread, bytes: Buffer): Promise<unknown> {
  // Moved, not copied, when the bytes own their memory (a large body always does).
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  const view = owned ? new Uint8Array(bytes.buffer) : new Uint8Array(bytes);
  return parser.call({ bytes: view }, [view.buffer as ArrayBuffer]);
}

const unavailable = (why: string) =>
  new AppError('service_unavailable', `The request body could not be parsed now (${why}); try again.`, undefined, 2);
