// What one client operation may take in total, across all of its subgraph requests (issue 29:
// mutation root fields that alternate between subgraphs become separate requests, each of which
// had its own audio budget). The gateway gives every operation an id (OPERATION_ID_HEADER) that
// each of its subgraph requests carries; a request without one is an operation of its own.
import { LRUCache } from 'lru-cache';

export interface Budgeted {
  /** The gateway's operation id, when the request came through a gateway. */
  operationId?: string;
  /** Whose operation: an id presented by another caller never shares its budget. */
  principal: { userId: string } | null;
}

/** Operations remembered at once, and for how long: longer than any operation runs. */
const OPERATIONS_KEPT = 10_000;
const OPERATION_TTL_MS = 10 * 60_000;

export class OperationBudget {
  private readonly byRequest = new WeakMap<object, number>();
  private readonly byOperation = new LRUCache<string, number>({ max: OPERATIONS_KEPT, ttl: OPERATION_TTL_MS });

  constructor(readonly max: number) {}

  /** Takes `amount` from the operation's budget; false (and nothing taken) when it would go over. */
  take(ctx: Budgeted & object, amount: number): boolean {
    const key = ctx.operationId && `${ctx.principal?.userId ?? ''}|${ctx.operationId}`;
    const taken = (key ? (this.byOperation.get(key) ?? 0) : (this.byRequest.get(ctx) ?? 0)) + amount;
    if (taken > this.max) return false;
    if (key) this.byOperation.set(key, taken);
    else this.byRequest.set(ctx, taken);
    return true;
  }
}
