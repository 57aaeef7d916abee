// API keys at the edge (CONTRACT.md "Admin: integrations"; docs/integrations.md). A key works as
// `Authorization: Bearer fvk_…` wherever an access token does. Only the auth subgraph reads the
// keys: the edge (the gateway, which the facade's requests, /graphql and both event streams pass
// through) exchanges a key with auth for a short-lived access token and passes that on. The token
// is cached by the key's SHA-256 for at most API_KEY_CACHE_SECONDS (≤ 60 s), so a busy script
// costs auth one exchange a minute per edge process. A cached token is dropped as soon as the
// event log says it is overtaken (the key revoked, its owner disabled or deleted, the owner's
// scopes changed), within the revocation bound, like a session's tokens (issue 41).
import crypto from 'node:crypto';
import jwt from 'jsonwebtoken';
import { AppError, isErrorCode } from './errors';

export const API_KEY_PREFIX = 'fvk_';
const BEARER_KEY = /^Bearer\s+(fvk_[A-Za-z0-9_-]{1,200})$/i;

/** The key in an Authorization header, when it holds one (and not a JWT). */
export function apiKeyOf(authorization: string | undefined): string | undefined {
  return authorization ? BEARER_KEY.exec(authorization)?.[1] : undefined;
}

export interface ExchangedToken {
  accessToken: string;
  expiresIn: number;
}

export type Exchange = (key: string, clientIp: string, requestId: string) => Promise<ExchangedToken>;

/** The most keys whose tokens one process keeps. */
const MAX_CACHED = 10_000;

/** What the event log says of a key's token (lib/event-log.ts, read at most once per EVENT_POLL_MS). */
export interface KeyTokenEvents {
  keyTokenOvertaken(userId: string, keyId: string, issuedAt: number): Promise<boolean>;
}

interface CachedToken {
  authorization: string;
  until: number;
  /** The token's owner, session (the key's id) and `iat` (seconds). */
  userId: string;
  keyId: string;
  issuedAt: number;
}

export class ApiKeyExchange {
  private run?: Exchange;
  private readonly cache = new Map<string, CachedToken>();

  /** `events`: without, a cached token lives its `cacheSeconds` whatever happens (tests only). */
  constructor(
    private readonly cacheSeconds: number,
    private readonly events?: KeyTokenEvents,
  ) {}

  /** The exchange itself (a GraphQL mutation of auth through the gateway), set once the gateway exists. */
  connect(run: Exchange): void {
    this.run = run;
  }

  /** The Authorization header to pass on for `authorization`: itself, or the token a key is exchanged for. */
  async authorization(
    authorization: string | undefined,
    clientIp: string,
    requestId: string,
  ): Promise<string | undefined> {
    const key = apiKeyOf(authorization);
    if (!key) return authorization;
    const id = crypto.createHash('sha256').update(key).digest('base64url');
    const now = Date.now();
    const cached = this.cache.get(id);
    if (cached && cached.until > now && !(await this.overtaken(cached))) return cached.authorization;
    this.cache.delete(id);
    if (!this.run) throw new AppError('service_unavailable', 'API keys cannot be checked yet.');
    const token = await this.run(key, clientIp, requestId);
    const exchanged = `Bearer ${token.accessToken}`;
    // Never past the token's own life (less a margin for the hops), never past the cache bound.
    const keep = Math.min(this.cacheSeconds, token.expiresIn - 10) * 1000;
    const claims = jwt.decode(token.accessToken) as { sub?: unknown; sid?: unknown; iat?: unknown } | null;
    const { sub, sid, iat } = claims ?? {};
    // Only a token the log can speak of is kept.
    if (keep > 0 && typeof sub === 'string' && typeof sid === 'string' && typeof iat === 'number') {
      if (this.cache.size >= MAX_CACHED) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(id, { authorization: exchanged, until: now + keep, userId: sub, keyId: sid, issuedAt: iat });
    }
    return exchanged;
  }

  /** Whether the log says the cached token is overtaken; a log that cannot be read: ask auth again. */
  private async overtaken(cached: CachedToken): Promise<boolean> {
    if (!this.events) return false;
    try {
      return await this.events.keyTokenOvertaken(cached.userId, cached.keyId, cached.issuedAt);
    } catch {
      return true;
    }
  }
}

/** The exchange's GraphQL answer as a token, or its error as the AppError it was. */
export function exchangedToken(answer: {
  data?: Record<string, unknown> | null;
  errors?: readonly { message: string; extensions?: Record<string, unknown> }[];
}): ExchangedToken {
  const error = answer.errors?.[0];
  if (error) {
    const code = error.extensions?.code;
    const retryAfter = error.extensions?.retryAfter;
    throw new AppError(
      isErrorCode(code) ? code : 'unauthorized',
      error.message,
      undefined,
      typeof retryAfter === 'number' ? retryAfter : undefined,
    );
  }
  const token = answer.data?.exchangeApiKey as ExchangedToken | undefined;
  if (!token) throw new AppError('unauthorized', 'The API key is invalid, expired or revoked.');
  return token;
}

export const EXCHANGE_API_KEY =
  'mutation ExchangeApiKey($key: String!) { exchangeApiKey(key: $key) { accessToken expiresIn } }';
