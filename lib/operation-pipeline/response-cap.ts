// The pipeline's answer-size step: an answer over GRAPHQL_MAX_RESPONSE_BYTES becomes a refusal
// before it is serialised (counted without building it, ../response-size.ts).
import { errorResult } from '../graphql-errors';
import { jsonExceeds, responseTooLarge } from '../response-size';
import type { OperationStep } from './pipeline';

export function responseCapStep(maxBytes: number): OperationStep {
  return {
    name: 'response-cap',
    after(op) {
      if (op.result && jsonExceeds(op.result, maxBytes)) op.result = errorResult(responseTooLarge(maxBytes));
    },
  };
}
