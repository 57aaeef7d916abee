// The pipeline's Idempotency-Key steps (../idempotency.ts): a mutation of a signed-in caller that
// carries a key claims it before it runs (or answers with the first answer, or a 409), and its
// answer is recorded once it is final (normalised and capped). Two step objects, because the
// claim goes before the execution and the record after the error and cap steps.
//
// A replay answers without running anything, so before the claim the caller passes the checks a
// first request passes in the subgraphs (issue 41): a session that has ended (logged out, the
// user disabled) is `unauthorized`, a field out of the caller's current scopes `forbidden`, by
// what the supergraph declares. Otherwise a dead token with the key got the first answer again.
import { GraphQLSchema, OperationTypeNode } from 'graphql';
import { IdempotencyStore, type Claim } from '../idempotency';
import type { Principal } from '../tokens';
import type { Operation, OperationStep } from './pipeline';
import { CallerAccess, scopeRefusals } from './scopes';

/** What the steps read of the caller's context (the gateway's). */
export interface IdempotentContext {
  principal?: Principal;
  idempotencyKey?: string;
}

/** Idempotency-Key at an edge: where answers are kept, and how the caller is checked first. */
export interface IdempotencyParts<Caller, Context> {
  store: IdempotencyStore;
  /** The schema that declares what each field needs (the supergraph's, with its scope directives). */
  needs: (op: Operation<Caller, Context>) => GraphQLSchema | undefined;
  /** The caller now: its current scopes, none (with why) when its session has ended. */
  access: (op: Operation<Caller, Context>) => Promise<CallerAccess>;
}

const claims = new WeakMap<object, Extract<Claim, { kind: 'run' }>>();

export function idempotencySteps<Caller, Context extends IdempotentContext>(
  parts: IdempotencyParts<Caller, Context>,
): [OperationStep<Caller, Context>, OperationStep<Caller, Context>] {
  const { store } = parts;
  return [
    {
      name: 'idempotency',
      async before(op) {
        const key = op.context?.idempotencyKey;
        const userId = op.context?.principal?.userId;
        // Queries are safe to repeat; an anonymous caller (logging in) has no user to scope the key to.
        if (key === undefined || !userId || op.operation?.operation !== OperationTypeNode.MUTATION) return;
        // Checked before the claim: a caller refused here neither replays nor holds the key.
        const schema = parts.needs(op);
        if (!schema || !op.document) throw new Error('idempotency: no schema or document to check the caller against');
        const access = await parts.access(op);
        const refused = scopeRefusals(schema, op.document, op.operation, () => access);
        if (refused.length) {
          op.result = { data: null, errors: refused };
          return;
        }
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
