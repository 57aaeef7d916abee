// The gateway's context of one request: who calls (the token checked once here), and the ids its
// subgraph requests carry.
import { randomUUID } from 'node:crypto';
import type { ApiKeyExchange } from '../lib/api-keys';
import { AppError } from '../lib/errors';
import type { Logger } from '../lib/logger';
import { headerValue, Headers, IDEMPOTENCY_KEY_HEADER, requestIdFrom } from '../lib/request-context';
import type { TokenVerifier } from '../lib/tokens';
import type { GatewayContext } from './data-sources';

// Operation ids: unguessable across processes and restarts, and cheap (no random bytes per operation).
const OPERATION_ID_PREFIX = `${randomUUID()}.`;
let operations = 0;

/**
 * Its logger is made when first used (errors): a child logger per request was a cost of its own.
 * A getter on the prototype, because Apollo copies the context's own properties (which would call
 * a getter of the object itself) for each operation.
 */
class RequestContext implements GatewayContext {
  private requestLogger?: Logger;
  /** Carried by each of this operation's subgraph requests: budgets per operation (lib/operation-budget.ts). */
  readonly operationId = `${OPERATION_ID_PREFIX}${(++operations).toString(36)}`;

  constructor(
    readonly requestId: string,
    readonly clientIp: string,
    readonly authorization: string | undefined,
    readonly principal: GatewayContext['principal'],
    readonly userAgent: string | undefined,
    private readonly processLogger: Logger,
    readonly idempotencyKey: string | undefined,
  ) {}

  get logger(): Logger {
    return (this.requestLogger ??= this.processLogger.child({ requestId: this.requestId }));
  }
}

export type ContextFor = (headers: Headers, clientIp: string) => Promise<GatewayContext>;

/** The gateway's own check of the token; subgraphs across HTTP check it again, in-process ones take its principal. */
export function callerContext(verifier: TokenVerifier, logger: Logger, apiKeys?: ApiKeyExchange): ContextFor {
  return async (headers, clientIp) => {
    const requestId = requestIdFrom(headers);
    // An API key becomes the short-lived token auth exchanges it for (lib/api-keys.ts); that token is passed on.
    const given = headerValue(headers, 'authorization');
    const authorization = apiKeys ? await apiKeys.authorization(given, clientIp, requestId) : given;
    let principal: GatewayContext['principal'];
    try {
      principal = authorization ? await verifier.verifyRequest({ headers: { authorization } }) : undefined;
    } catch (err) {
      throw err instanceof AppError ? err : new AppError('unauthorized');
    }
    return new RequestContext(
      requestId,
      clientIp,
      authorization,
      principal,
      headerValue(headers, 'user-agent'),
      logger,
      headerValue(headers, IDEMPOTENCY_KEY_HEADER),
    );
  };
}
