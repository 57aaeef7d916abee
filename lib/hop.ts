// The hops between this service's own processes (facade → gateway → subgraph) carry the hop
// secret (SUBGRAPH_SECRET). A process believes what only another of its processes may say (the
// client's address) only with it, and in production a subgraph answers no one without it
// (contract: "Subgraph access", "Client addresses").
import crypto from 'node:crypto';
import net from 'node:net';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Config } from './config';
import { jsonBody, type LargeBodyConfig } from './large-bodies';
import { AppError, ERROR_STATUS } from './errors';
import { errorResult } from './graphql-errors';
import { sendJson } from './http-app';
import type { Logger } from './logger';
import { CLIENT_IP_HEADER, Headers, headerValue, HOP_SECRET_HEADER } from './request-context';

const digest = (value: string) => crypto.createHash('sha256').update(value).digest();

export class HopSecret {
  private readonly expected?: Buffer;

  constructor(readonly secret: string | undefined) {
    this.expected = secret ? digest(secret) : undefined;
  }

  get configured(): boolean {
    return this.expected !== undefined;
  }

  /** True when the request presents the secret (compared in constant time: digests of equal length). */
  presentedBy(headers: Headers): boolean {
    if (!this.expected) return false;
    const presented = headerValue(headers, HOP_SECRET_HEADER);
    return presented !== undefined && crypto.timingSafeEqual(digest(presented), this.expected);
  }
}

/**
 * The client's address: the previous hop's claim when it presents the hop secret and the claim
 * is an IP address, else the peer (as TRUST_PROXY makes `req.ip`).
 */
export function hopClientAddress(req: Request, hop: HopSecret): string {
  const claimed = headerValue(req.headers, CLIENT_IP_HEADER);
  if (claimed && net.isIP(claimed) && hop.presentedBy(req.headers)) return claimed;
  return req.ip ?? '';
}

/** In production a subgraph answers only the hop secret's holders; elsewhere it is open for development. */
export const subgraphGuarded = (config: Pick<Config, 'NODE_ENV'>) => config.NODE_ENV === 'production';

/**
 * Where a subgraph process listens: in production without a secret, on loopback only (the
 * gateway must then run on the same host).
 */
export function subgraphHost(config: Pick<Config, 'NODE_ENV' | 'SUBGRAPH_SECRET' | 'HOST'>, logger: Logger): string {
  if (!subgraphGuarded(config) || config.SUBGRAPH_SECRET) return config.HOST;
  if (!['127.0.0.1', '::1', 'localhost'].includes(config.HOST)) {
    logger.warn(
      { host: config.HOST },
      'no SUBGRAPH_SECRET in production: listening on loopback only; _service and _entities are refused',
    );
  }
  return '127.0.0.1';
}

/** Middleware of a subgraph's /graphql: in production with a secret, callers without it are refused before their body is read. */
export function requireHopSecret(config: Pick<Config, 'NODE_ENV'>, hop: HopSecret) {
  const guarded = subgraphGuarded(config) && hop.configured;
  return (req: Request, res: Response, next: NextFunction) => {
    if (!guarded || hop.presentedBy(req.headers)) return next();
    const e = new AppError(
      'unauthorized',
      `This subgraph answers only its gateway: present the hop secret (${HOP_SECRET_HEADER}, SUBGRAPH_SECRET).`,
    );
    sendJson(res, ERROR_STATUS.unauthorized, errorResult(e));
  };
}

/**
 * The JSON body parser of a hop's receiving end (gateway, subgraph): up to HOP_BODY_LIMIT_BYTES
 * (16 MiB) from the hop secret's holders, whose bodies a route of the facade has already
 * limited (a hub import takes 8 MiB), and BODY_LIMIT_BYTES from anyone else.
 */
export function hopJsonBody(
  config: Pick<Config, 'BODY_LIMIT_BYTES' | 'HOP_BODY_LIMIT_BYTES'> & LargeBodyConfig,
  hop: HopSecret,
): RequestHandler {
  // Large bodies are admitted and parsed off the event loop (./large-bodies.ts).
  const outside = jsonBody(config, config.BODY_LIMIT_BYTES);
  const inside = jsonBody(config, Math.max(config.BODY_LIMIT_BYTES, config.HOP_BODY_LIMIT_BYTES));
  return (req, res, next) => (hop.presentedBy(req.headers) ? inside : outside)(req, res, next);
}
