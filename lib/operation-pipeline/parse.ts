// The pipeline's parse-and-validate step: each text once per schema (../document-cache.ts), and
// the one operation the request names.
import { getOperationAST } from 'graphql';
import type { DocumentCache } from '../document-cache';
import { AppError } from '../errors';
import { noOperation } from './limits';
import type { Operation, OperationStep } from './pipeline';

/** `documents`: the cache of the operation's schema; undefined while no schema is loaded. */
export function parseStep<Caller, Context>(
  documents: (op: Operation<Caller, Context>) => DocumentCache | undefined,
): OperationStep<Caller, Context> {
  return {
    name: 'parse',
    before(op) {
      const cache = documents(op);
      if (!cache) {
        op.result = {
          errors: [new AppError('service_unavailable', 'The schema is not loaded yet; try again shortly.')],
        };
        return;
      }
      const document = cache.get(op.request.query);
      if (!('kind' in document)) {
        op.result = { errors: document };
        return;
      }
      op.document = document;
      const name = op.request.operationName ?? undefined;
      const operation = getOperationAST(document, name);
      if (!operation) op.result = { errors: [noOperation(document, name)] };
      else op.operation = operation;
    },
  };
}
