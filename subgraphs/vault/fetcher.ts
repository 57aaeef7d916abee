// Fetches a captured link for enrichment: GET, http/https only, every connection through the
// SSRF guard (lib/ssrf-guard.ts), redirects followed here (each one a new guarded connection),
// at most `maxBytes` read AFTER decompression (a gzip bomb stops there), and one deadline for
// everything (a server that trickles bytes is cut off by it).
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { isBlockedAddress } from '../../lib/ssrf-guard';

/** undici's request, loaded on first use (issue 44's idle memory). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const undiciRequest = () => (require('undici') as typeof import('undici')).request;

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
}

export interface FetchedPage {
  /** The URL that answered (after redirects). */
  url: string;
  mediaType: string | null;
  charset: string | null;
  /** Content-Length as announced, when there was one. */
  declaredBytes: number | null;
  /** The decoded bytes read: at most maxBytes. */
  body: Buffer;
  /** More was there than maxBytes. */
  truncated: boolean;
}

/** Why a fetch failed, as the item's `error` says it. */
export class FetchError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const USER_AGENT = 'Mozilla/5.0 (compatible; VaultFetcher/1.0; +https://github.com/)';

function headerText(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** `text/html; charset=x` → ['text/html', 'x']. */
export function parseContentType(value: string | undefined): { mediaType: string | null; charset: string | null } {
  if (!value) return { mediaType: null, charset: null };
  const [type, ...params] = value.split(';');
  const mediaType = type.trim().toLowerCase() || null;
  const charset = params.map((p) => /^\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(p)?.[1]).find((c): c is string => !!c);
  return {
    // RFC 6838: a type and a subtype of at most 127 characters each. A longer one is dropped (a cut
    // one would be a wrong type): it overflowed media_type (255) on MariaDB, the write failed and
    // the page was fetched again until the item ended `interrupted` (issue 41, finding 9).
    mediaType: mediaType && /^[\w.+-]{1,127}\/[\w.+-]{1,127}$/.test(mediaType) ? mediaType : null,
    charset: charset ?? null,
  };
}

/** The body decoded (Content-Encoding), or the raw body for an identity or unknown encoding. */
function decoded(body: Readable, encoding: string | undefined): Readable {
  const codings = (encoding ?? '')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c && c !== 'identity');
  let stream = body;
  // Applied in the reverse order of their listing (RFC 9110 8.4).
  for (const coding of codings.reverse()) {
    const next =
      coding === 'gzip' || coding === 'x-gzip'
        ? createGunzip()
        : coding === 'deflate'
          ? createInflate()
          : coding === 'br'
            ? createBrotliDecompress()
            : null;
    if (!next)
      throw new FetchError('unsupported_encoding', `The answer's Content-Encoding ${coding} is not supported.`);
    stream.on('error', (err) => next.destroy(err));
    stream = stream.pipe(next);
  }
  return stream;
}

async function readCapped(stream: Readable, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const pieces: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      if (room > 0) pieces.push(chunk.subarray(0, room));
      size = maxBytes;
      truncated = true;
      break;
    }
    pieces.push(chunk);
    size += chunk.length;
  }
  stream.destroy();
  return { body: Buffer.concat(pieces, size), truncated };
}

function failure(err: unknown, signal: AbortSignal): FetchError {
  if (err instanceof FetchError) return err;
  if (isBlockedAddress(err)) return new FetchError('blocked_address', 'The address is not a public one.');
  if (signal.aborted) return new FetchError('timeout', 'The page did not arrive in time.');
  const code = String((err as { code?: string })?.code ?? (err as { cause?: { code?: string } })?.cause?.code ?? '');
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    return new FetchError('dns_failed', 'The host name does not resolve.');
  if (code.startsWith('Z_') || code === 'ERR__ERROR')
    return new FetchError('bad_encoding', 'The compressed answer is corrupt.');
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return new FetchError('timeout', 'The page did not arrive in time.');
  return new FetchError('fetch_failed', 'The page could not be fetched.');
}

/** Fetches `url` under the limits; throws FetchError. */
export async function fetchPage(url: URL, dispatcher: Dispatcher, limits: FetchLimits): Promise<FetchedPage> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let current = url;
  try {
    for (let redirects = 0; ; redirects++) {
      if (current.protocol !== 'http:' && current.protocol !== 'https:')
        throw new FetchError('unsupported_scheme', 'Only http and https URLs are fetched.');
      const answer = await undiciRequest()(current, {
        method: 'GET',
        dispatcher,
        signal,
        headers: {
          accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8',
          'accept-encoding': 'gzip, deflate, br',
          'user-agent': USER_AGENT,
        },
        // Ours is the one deadline; undici's own idle timers would be longer anyway.
        headersTimeout: limits.timeoutMs,
        bodyTimeout: limits.timeoutMs,
      });
      const { statusCode, headers, body } = answer;
      // A body left unread is destroyed; its abort is not an error of ours.
      body.on('error', () => undefined);
      if (statusCode >= 300 && statusCode < 400 && headers.location) {
        body.destroy();
        if (redirects >= limits.maxRedirects)
          throw new FetchError('too_many_redirects', `More than ${limits.maxRedirects} redirects.`);
        try {
          current = new URL(headerText(headers.location)!, current);
        } catch {
          throw new FetchError('bad_redirect', 'A redirect named no valid URL.');
        }
        continue;
      }
      if (statusCode < 200 || statusCode >= 300) {
        body.destroy();
        throw new FetchError(`http_${statusCode}`, `The server answered ${statusCode}.`);
      }
      const { mediaType, charset } = parseContentType(headerText(headers['content-type']));
      const length = Number(headerText(headers['content-length']));
      const stream = decoded(body, headerText(headers['content-encoding']));
      let read: { body: Buffer; truncated: boolean };
      try {
        read = await readCapped(stream, limits.maxBytes);
      } finally {
        // Also the connection under a decompressor: a server that keeps sending is cut off here.
        body.destroy();
      }
      const { body: bytes, truncated } = read;
      return {
        url: current.href,
        mediaType,
        charset,
        declaredBytes: Number.isSafeInteger(length) && length >= 0 ? length : null,
        body: bytes,
        truncated,
      };
    }
  } catch (err) {
    throw failure(err, signal);
  }
}
