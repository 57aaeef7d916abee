// The pipeline's last step: the operation metric (graphql_operations_total and its duration),
// then whatever else observes finished operations (`observers`). Tracing wraps the whole run instead
// (./tracing.ts): its operation span must be open while the steps run.
import { observeOperation, secondsSince } from '../metrics';
import type { Operation, OperationStep } from './pipeline';

export type OperationObserver = (op: Operation, seconds: number) => void;

/** The outcome label: `ok`, or the first error's code. */
export function outcomeOf(op: Operation): string {
  const errors = op.answer.errors;
  if (!errors?.length) return 'ok';
  const code = errors[0].extensions?.code;
  return typeof code === 'string' ? code : 'error';
}

export function metricsStep(options: {
  metrics: boolean;
  observers?: readonly OperationObserver[];
}): OperationStep | undefined {
  const observers = options.observers ?? [];
  if (!options.metrics && !observers.length) return undefined;
  return {
    name: 'metrics',
    after(op) {
      const seconds = secondsSince(op.start);
      if (options.metrics) observeOperation(op.operation?.name?.value, op.operation?.operation, outcomeOf(op), seconds);
      for (const observe of observers) observe(op, seconds);
    },
  };
}
