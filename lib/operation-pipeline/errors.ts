// The pipeline's error step: every error of the answer (a refusal, a resolver's throw, a
// subgraph's error) in this service's form (../graphql-errors.ts), whichever step made it.
import { GraphQLError, GraphQLFormattedError } from 'graphql';
import { normalizeError } from '../graphql-errors';
import type { Logger } from '../logger';
import type { OperationStep } from './pipeline';

/** A thrown value as a GraphQL error that keeps it as its cause. */
export function asGraphQLError(err: unknown): GraphQLError {
  if (err instanceof GraphQLError) return err;
  const cause = err instanceof Error ? err : new Error(String(err));
  return new GraphQLError(cause.message, { originalError: cause });
}

/** One error, raw (thrown) or already formatted (another hop's), in this service's form. */
export function formatError(err: unknown, logger?: Logger): GraphQLFormattedError {
  if (
    err &&
    typeof err === 'object' &&
    !(err instanceof Error) &&
    typeof (err as GraphQLFormattedError).message === 'string'
  ) {
    return normalizeError(err as GraphQLFormattedError, err, logger);
  }
  const e = asGraphQLError(err);
  return normalizeError(e.toJSON(), e, logger);
}

export function errorsStep(): OperationStep {
  return {
    name: 'errors',
    after(op) {
      const result = op.result;
      if (op.normalized || !result) return;
      op.normalized = true;
      if (!result.errors) return;
      // Errors are logged with the request's logger (its request id).
      const logger = op.logger;
      op.result = { ...result, errors: result.errors.map((e) => formatError(e, logger)) };
    },
  };
}
