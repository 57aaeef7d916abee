// The pipeline's execute step: the entry point's own executor (the gateway's query plans, a
// subgraph's schema, the event stream's), run once the operation is admitted.
import type { Operation, OperationResult, OperationStep } from './pipeline';

/** `run` answers with a result, or sets `op.stream` (a subscription) and answers nothing. */
export function executeStep<Caller, Context>(
  run: (op: Operation<Caller, Context>) => OperationResult | void | Promise<OperationResult | void>,
): OperationStep<Caller, Context> {
  const answer = (op: Operation<Caller, Context>, result: OperationResult | void) => {
    if (result) op.result = result;
  };
  return {
    name: 'execute',
    before(op) {
      const result = run(op);
      if (!(result instanceof Promise)) return answer(op, result);
      return result.then(
        (r) => answer(op, r),
        // A rejection (query planning throws) is an error of the operation, never of the request.
        (err: unknown) => {
          op.result = { errors: [err] };
        },
      );
    },
  };
}
