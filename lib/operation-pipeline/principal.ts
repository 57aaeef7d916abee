// The pipeline's principal step: the caller's context, with its verified principal. The next
// step (issue 30) checks the principal's scopes against the operation; it goes right after this
// one in ./index.ts.
import type { Operation, OperationStep } from './pipeline';

/** `contextOf` makes the caller's context; what it throws (an invalid token: `unauthorized`) answers the operation. */
export function principalStep<Caller, Context>(
  contextOf: (op: Operation<Caller, Context>) => Context | Promise<Context>,
): OperationStep<Caller, Context> {
  return {
    name: 'principal',
    before(op) {
      const context = contextOf(op);
      if (!(context instanceof Promise)) {
        op.context = context;
        return;
      }
      return context.then(
        (c) => {
          op.context = c;
        },
        (err: unknown) => {
          op.result = { errors: [err] };
        },
      );
    },
  };
}
