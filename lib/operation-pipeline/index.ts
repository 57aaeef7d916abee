// The operation pipeline (./pipeline.ts) in its one order. Every entry point builds it here with
// its own parts, so a new rule is one line below and reaches them all.
import type { DocumentCache } from '../document-cache';
import { errorsStep } from './errors';
import { IdempotencyParts, idempotencySteps, IdempotentContext } from './idempotency';
import { executeStep } from './execute';
import { expensiveEarlyStep, ExpensiveEarlyParts } from './expensive-early';
import { limitsStep, OperationLimits } from './limits';
import { metricsStep, OperationObserver } from './metrics';
import { parseStep } from './parse';
import { Operation, OperationResult, pipeline, Pipeline } from './pipeline';
import { principalStep } from './principal';
import { responseCapStep } from './response-cap';
import { CallerAccess, scopesStep } from './scopes';
import { traced } from './tracing';
import { wellFormedTextStep } from './well-formed-text';

export { Operation } from './pipeline';
export { enterOperationSpan } from './tracing';
export type { FormattedResult, OperationRequest, OperationResult, OperationStep, Pipeline } from './pipeline';
export { operationLimits } from './limits';
export type { OperationLimits, LimitsConfig } from './limits';
export type { CallerAccess } from './scopes';
export type { IdempotencyParts } from './idempotency';
export type { ExpensiveEarlyParts } from './expensive-early';

export interface PipelineParts<Caller, Context> {
  /**
   * The early refusal of an expensive field from a user whose slots are all taken (./expensive-early.ts):
   * where the expensive work runs in this process (the gateway of the one-process server).
   */
  early?: ExpensiveEarlyParts<Caller, Context>;
  /** The shape limits, and whether the caller presented a token; none where the caller is this process. */
  limits?: { limits: OperationLimits; authenticated: (op: Operation<Caller, Context>) => boolean };
  /** The parsed-document cache of the operation's schema. */
  documents: (op: Operation<Caller, Context>) => DocumentCache | undefined;
  /** The caller's context, with its verified principal. */
  principal: (op: Operation<Caller, Context>) => Context | Promise<Context>;
  /**
   * The caller's scopes, checked against what each selected field declares (./scopes.ts). Every
   * entry point that executes a subgraph's schema gives it; the gateway leaves it to the subgraphs.
   */
  scopes?: (op: Operation<Caller, Context>) => CallerAccess;
  execute: (op: Operation<Caller, Context>) => OperationResult | void | Promise<OperationResult | void>;
  /** GRAPHQL_MAX_RESPONSE_BYTES; none where a caller in this process caps the whole answer (the gateway over an in-process subgraph). */
  maxResponseBytes: number | undefined;
  /** Count and time operations (METRICS_ENABLED), and anything else that observes them. */
  metrics: boolean;
  observers?: readonly OperationObserver[];
  /**
   * Idempotency-Key on mutations (../idempotency.ts): at the edge only (the gateway), never again
   * in a subgraph; with the caller's check that a replay passes as a first request would.
   */
  idempotency?: IdempotencyParts<Caller, Context>;
}

export function operationPipeline<Caller, Context>(parts: PipelineParts<Caller, Context>): Pipeline<Caller, Context> {
  const [idempotency, idempotencyRecord] = parts.idempotency
    ? idempotencySteps<Caller, Context & IdempotentContext>(parts.idempotency)
    : [];
  // Tracing on: a span per operation, around every step (./tracing.ts).
  return traced(
    pipeline<Caller, Context>([
      parts.early && expensiveEarlyStep(parts.early),
      parts.limits && limitsStep(parts.limits.limits, parts.limits.authenticated),
      parseStep(parts.documents),
      wellFormedTextStep(),
      principalStep(parts.principal),
      parts.scopes && scopesStep(parts.scopes),
      idempotency,
      executeStep(parts.execute),
      errorsStep(),
      parts.maxResponseBytes !== undefined && responseCapStep(parts.maxResponseBytes),
      metricsStep({ metrics: parts.metrics, observers: parts.observers }),
      // Last: the answer as it leaves (normalised, capped) is what a retry gets.
      idempotencyRecord,
    ]),
  );
}
