// The pipeline's Idempotency-Key steps (../idempotency.ts): a mutation of a signed-in caller that
// carries a key claims it before it runs (or answers with the first answer, or a 409), and its
// answer is recorded once it is final (normalised and capped). Two step objects, because the
// claim goes before the execution and the record after the error and cap steps.
import { OperationTypeNode } from 'graphql';
import { IdempotencyStore, type Claim } from '../idempotency';
import type { Principal } from '../tokens';
import type { OperationStep } from './pipeline';

/** What the steps read of the caller's context (the gateway's). */
export interface IdempotentContext {
  principal?: Principal;
  idempotencyKey?: string;
}

const claims = new WeakMap<object, Extract<Claim, { kind: 'run' }>>();

export function idempotencySteps<Caller, Context extends IdempotentContext>(
  store: IdempotencyStore,
): [OperationStep<Caller, Context>, OperationStep<Caller, Context>] {
  return [
    {
      name: 'idempotency',
      async before(op) {
        const key = op.context?.idempotencyKey;
        const userId = op.context?.principal?.userId;
        // Queries are safe to repeat; an anonymous caller (logging in) has no user to scope the key to.
        if (key === undefined || !userId || op.operation?.operation !== OperationTypeNode.MUTATION) return;
        const claim = await store.claim(userId, key, op.request);
        if (claim.kind === 'run') claims.set(op, claim);
        else if (claim.kind === 'replay') {
          op.result = claim.answer;
          op.normalized = true;
        } else op.result = { errors: [claim.error] };
      },
    },
    {
      name: 'idempotency-record',
      async after(op) {
        const claim = claims.get(op);
        if (!claim) return;
        claims.delete(op);
        try {
          await store.record(claim, op.answer);
        } catch (err) {
          // The claim's lock runs out and a retry runs the operation again (docs/idempotency.md).
          op.logger.error({ err }, 'recording the answer of an Idempotency-Key failed');
        }
      },
    },
  ];
}
