// Token signing (auth subgraph only) and verification (gateway and every subgraph).
// RS256 key pair: partner subgraphs verify with the public key alone (served as a JWKS).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import type { Request } from 'express';
import type { Config } from './config';
import { AppError } from './errors';
import { builtInRoles } from './scopes';

/** `stream`: a ticket that opens one event stream (browsers' EventSource cannot send a header). */
export type TokenType = 'access' | 'refresh' | 'stream';

/** Who the caller is, as proven by a verified token. */
export interface Principal {
  userId: string;
  sessionId: string;
  roles: string[];
  /** The user's scopes when the token was issued; a newer change in the event log wins (lib/revocations.ts). */
  scopes: readonly string[];
  /** When the token was issued (seconds, its `iat`). */
  issuedAt: number;
  /** An API key's token: its scopes are the key's, so a change of the owner's scopes can only narrow them. */
  apiKey?: boolean;
  tokenId: string;
  expiresAt: Date;
}

export interface KeyMaterial {
  publicKey: string;
  privateKey?: string;
  kid: string;
}

const ALGORITHM = 'RS256';

/**
 * Keys from JWT_PRIVATE_KEY / JWT_PUBLIC_KEY (PEM), else a pair generated once under
 * DATA_DIR/keys so that tokens survive a restart. Concurrent first starts agree on one pair.
 */
export function loadKeys(config: Pick<Config, 'JWT_PRIVATE_KEY' | 'JWT_PUBLIC_KEY' | 'dataDir'>): KeyMaterial {
  let privateKey = config.JWT_PRIVATE_KEY?.replace(/\\n/g, '\n');
  let publicKey = config.JWT_PUBLIC_KEY?.replace(/\\n/g, '\n');
  if (!privateKey && !publicKey) {
    const dir = path.join(config.dataDir, 'keys');
    const file = path.join(dir, 'jwt-private.pem');
    fs.mkdirSync(dir, { recursive: true });
    if (!fs.existsSync(file)) {
      const pair = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
      // Written whole under a name of its own, then linked into place: a process starting at the
      // same moment never reads a half-written file, and the first link wins (EEXIST for the rest).
      const tmp = `${file}.${process.pid}.${crypto.randomUUID()}.tmp`;
      fs.writeFileSync(tmp, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { flag: 'wx', mode: 0o600 });
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      } finally {
        fs.rmSync(tmp, { force: true });
      }
    }
    privateKey = fs.readFileSync(file, 'utf8');
  }
  if (privateKey && !publicKey) {
    publicKey = crypto.createPublicKey(privateKey).export({ type: 'spki', format: 'pem' }).toString();
  }
  const jwk = crypto.createPublicKey(publicKey!).export({ format: 'jwk' });
  const kid = crypto
    .createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
  return { publicKey: publicKey!, privateKey, kid };
}

/** The public key as a JSON Web Key Set. */
export function jwks(keys: KeyMaterial) {
  const jwk = crypto.createPublicKey(keys.publicKey).export({ format: 'jwk' });
  return { keys: [{ ...jwk, kid: keys.kid, alg: ALGORITHM, use: 'sig' }] };
}

export interface SignedToken {
  token: string;
  tokenId: string;
  expiresAt: Date;
}

export class TokenSigner {
  /** Parsed once: jsonwebtoken would parse a PEM string again on every signature. */
  private readonly privateKey: crypto.KeyObject;

  constructor(
    private readonly keys: KeyMaterial,
    private readonly issuer: string,
  ) {
    if (!keys.privateKey) throw new Error('TokenSigner needs the private key (JWT_PRIVATE_KEY)');
    this.privateKey = crypto.createPrivateKey(keys.privateKey);
  }

  sign(
    claims: { userId: string; sessionId: string; roles: string[]; scopes: readonly string[] },
    typ: TokenType,
    ttlSeconds: number,
    extra: Record<string, unknown> = {},
  ): SignedToken {
    const tokenId = crypto.randomUUID();
    const nowSeconds = Math.floor(Date.now() / 1000);
    const token = jwt.sign(
      { ...extra, sid: claims.sessionId, typ, roles: claims.roles, scopes: claims.scopes, iat: nowSeconds },
      this.privateKey,
      {
        algorithm: ALGORITHM,
        keyid: this.keys.kid,
        issuer: this.issuer,
        subject: claims.userId,
        jwtid: tokenId,
        expiresIn: ttlSeconds,
      },
    );
    return { token, tokenId, expiresAt: new Date((nowSeconds + ttlSeconds) * 1000) };
  }
}

type HeaderSource = { headers: Record<string, string | string[] | undefined> };

/**
 * Verifies bearer tokens with passport-jwt: signature (RS256 only, so `alg: none` and
 * HMAC tricks fail), issuer, expiry, and the token type the caller expects.
 */
export class TokenVerifier {
  private readonly strategies: Record<TokenType, JwtStrategy>;

  /** `tokensKept`: how many verified access tokens to remember (a parameter so a test can reach the bound). */
  constructor(
    keys: KeyMaterial,
    issuer: string,
    private readonly tokensKept = VERIFIED_TOKENS_KEPT,
  ) {
    // A KeyObject, parsed once: given the PEM string, jsonwebtoken parses it on every verification.
    const publicKey = crypto.createPublicKey(keys.publicKey) as unknown as string;
    const make = (typ: TokenType) =>
      new JwtStrategy(
        {
          jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
          secretOrKey: publicKey,
          algorithms: [ALGORITHM],
          issuer,
        },
        (payload: Record<string, unknown>, done: (err: unknown, user?: Principal | false) => void) => {
          const { sub, sid, jti, exp, iat, roles, scopes, sxp } = payload;
          if (
            payload.typ !== typ ||
            typeof sub !== 'string' ||
            typeof sid !== 'string' ||
            typeof jti !== 'string' ||
            typeof exp !== 'number' ||
            typeof iat !== 'number'
          ) {
            return done(null, false);
          }
          // A stream ticket expires soon, but the stream it opens lasts as long as the access
          // token that asked for it (`sxp`).
          if (typ === 'stream' && typeof sxp !== 'number') return done(null, false);
          done(null, {
            userId: sub,
            sessionId: sid,
            tokenId: jti,
            roles: strings(roles),
            // A token of the release before scopes has none: what its roles gave then (until it is refreshed).
            scopes: Array.isArray(scopes)
              ? strings(scopes)
              : builtInRoles().get(strings(roles).includes('admin') ? 'admin' : 'user')!,
            issuedAt: iat,
            ...(payload.api_key === true ? { apiKey: true } : {}),
            expiresAt: new Date((typ === 'stream' ? (sxp as number) : exp) * 1000),
          });
        },
      );
    this.strategies = { access: make('access'), refresh: make('refresh'), stream: make('stream') };
  }

  /**
   * Access tokens already verified by this process, by their exact text, until they expire. A
   * client sends the same token with each request for its whole life, and the RSA check was the
   * largest cost of verifying it; the signature of a given text cannot become valid or invalid
   * later, and expiry is checked again on every hit. Revocation is not this class's business
   * (each subgraph checks the session on every request).
   */
  private readonly verified = new Map<string, Principal>();

  /** The principal of the request's `Authorization: Bearer` token; throws `unauthorized`. */
  verifyRequest(req: HeaderSource, typ: TokenType = 'access'): Promise<Principal> {
    const token = typ === 'access' ? bearerToken(req.headers.authorization) : undefined;
    if (token) {
      const known = this.verified.get(token);
      if (known && Date.now() < known.expiresAt.getTime()) return Promise.resolve(known);
      if (known) this.verified.delete(token);
    }
    const strategy = this.strategies[typ];
    return new Promise((resolve, reject) => {
      // passport's own way of running a strategy: an instance whose actions we supply.
      const run = Object.create(strategy) as JwtStrategy & Record<string, unknown>;
      run.success = (user: Principal) => {
        if (token) this.remember(token, user);
        resolve(user);
      };
      run.fail = () => reject(new AppError('unauthorized', 'The token is missing, invalid or expired.'));
      run.error = () => reject(new AppError('unauthorized', 'The token is missing, invalid or expired.'));
      run.authenticate(req as unknown as Request, {});
    });
  }

  /**
   * The principal of an `Authorization` value whose token this process has already verified and
   * which has not expired, without checking anything again (no signature, no session): for cheap
   * early refusals that only the token's own user can meet (lib/kit/expensive.ts). Undefined
   * for any other value, an API key included.
   */
  known(authorization: string | undefined): Principal | undefined {
    const token = bearerToken(authorization);
    const known = token ? this.verified.get(token) : undefined;
    return known && Date.now() < known.expiresAt.getTime() ? known : undefined;
  }

  private remember(token: string, principal: Principal): void {
    // Oldest first out: a Map iterates in insertion order.
    if (this.verified.size >= this.tokensKept) this.verified.delete(this.verified.keys().next().value!);
    this.verified.set(token, Object.freeze(principal));
  }

  verifyToken(token: string, typ: TokenType): Promise<Principal> {
    return this.verifyRequest({ headers: { authorization: `Bearer ${token}` } }, typ);
  }
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** How many verified access tokens a process remembers (a few MiB at most). */
const VERIFIED_TOKENS_KEPT = 5000;

/** The token of `Authorization: Bearer <token>`, read as passport-jwt reads it. */
function bearerToken(header: string | string[] | undefined): string | undefined {
  const m = typeof header === 'string' ? /(\S+)\s+(\S+)/.exec(header) : null;
  return m && m[1].toLowerCase() === 'bearer' ? m[2] : undefined;
}

/** The scopes a token carries, as a set made once per verified token (verified tokens are cached). */
const tokenScopes = new WeakMap<Principal, ReadonlySet<string>>();
export function scopesOfToken(principal: Principal): ReadonlySet<string> {
  let set = tokenScopes.get(principal);
  if (!set) tokenScopes.set(principal, (set = new Set(principal.scopes)));
  return set;
}

/** The caller's scopes given the user's current set: an API key's token keeps only what both hold. */
export function effectiveScopes(principal: Principal, current: ReadonlySet<string>): ReadonlySet<string> {
  if (!principal.apiKey) return current;
  const own = scopesOfToken(principal);
  return current === own ? own : new Set([...own].filter((s) => current.has(s)));
}

export function hasBearer(headers: HeaderSource['headers']): boolean {
  return typeof headers.authorization === 'string' && headers.authorization.length > 0;
}
