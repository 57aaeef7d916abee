// One GraphQL operation pipeline for every entry point (the gateway's /graphql and direct path,
// /graphql/stream, the subgraph processes). Each shared rule is one step in its own module; an
// entry point lists its steps and passes what is its own (its schema, how it finds the caller,
// how it executes). Steps are envelop-style: `before` hooks run in order until one answers (a
// refusal, or the execution), then every `after` hook runs in order, so a refusal is normalised,
// capped and counted like an answer. The order (./index.ts's `operationPipeline`):
//   expensive early refusal → limits → parse and validate → well-formed text → principal → scopes → idempotency → execute →
//   error normalisation → answer-size cap → metrics → the idempotency record (and tracing around).
// One small object per operation carries what the steps share; no closures are made per call.
import type {
  DocumentNode,
  GraphQLFormattedError,
  GraphQLSchema,
  OperationDefinitionNode,
  OperationTypeNode,
} from 'graphql';
import type { Logger } from '../logger';

export interface OperationRequest {
  query: string;
  variables?: Record<string, unknown> | null;
  operationName?: string | null;
}

/** A single answer. `errors` are raw (thrown values, GraphQLErrors) until the normalisation step formats them. */
export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly unknown[];
}

/** A normalised answer: what leaves the pipeline. */
export interface FormattedResult {
  data?: Record<string, unknown> | null;
  errors?: GraphQLFormattedError[];
}

/** One operation on its way through the pipeline. */
export class Operation<Caller = unknown, Context = unknown> {
  readonly start = process.hrtime.bigint();
  /** Set by the parse step. */
  document?: DocumentNode;
  /** The operation the document selects (set by the parse step, or by an entry point that parsed it). */
  operation?: OperationDefinitionNode;
  /** The caller's context (set by the principal step). */
  context?: Context;
  /** Set by the step that answers: a refusal or the execution. */
  result?: OperationResult;
  /** A subscription's results (set by an execute step instead of `result`); after-steps leave it alone. */
  stream?: AsyncGenerator<unknown>;
  /** True once the errors of `result` are in this service's form. */
  normalized = false;

  constructor(
    readonly request: OperationRequest,
    /** What the entry point knows of the caller (headers, address, a context already made). */
    readonly caller: Caller,
    /** The schema the operation runs against; undefined while none is loaded. */
    readonly schema: GraphQLSchema | undefined,
    /** The kinds of operation this entry point serves. */
    readonly kinds: readonly OperationTypeNode[],
    /** The process's logger, for what goes wrong before the caller's context exists. */
    readonly processLogger: Logger,
  ) {}

  /** The request's logger once the caller is known (its context's), else the process's. */
  get logger(): Logger {
    return (this.context as { logger?: Logger } | undefined)?.logger ?? this.processLogger;
  }

  /** The answer as it leaves the pipeline (after the normalisation step). */
  get answer(): FormattedResult {
    return (this.result ?? {}) as FormattedResult;
  }
}

export interface OperationStep<Caller = unknown, Context = unknown> {
  /** For logs and tests: `limits`, `parse`, `principal`, `execute`, `errors`, `response-cap`, `metrics`. */
  readonly name: string;
  /** Runs before execution, in order; setting `op.result` (or `op.stream`) answers the operation. */
  before?(op: Operation<Caller, Context>): void | Promise<void>;
  /** Runs after the answer, in order, whichever step answered; a promise is awaited before the next. */
  after?(op: Operation<Caller, Context>): void | Promise<void>;
}

export interface Pipeline<Caller, Context> {
  readonly steps: readonly OperationStep<Caller, Context>[];
  /** Runs `op` through every step; resolves when the after-steps have run. */
  run(op: Operation<Caller, Context>): Promise<Operation<Caller, Context>>;
  /** The after-steps alone, for an answer made elsewhere (Apollo Server's, ../../gateway/apollo-adapter.ts). */
  finish(op: Operation<Caller, Context>): void | Promise<void>;
}

export function pipeline<Caller, Context>(
  steps: readonly (OperationStep<Caller, Context> | false | undefined)[],
): Pipeline<Caller, Context> {
  const used = steps.filter((s): s is OperationStep<Caller, Context> => Boolean(s));
  const befores = used.filter((s) => s.before !== undefined);
  const afters = used.filter((s) => s.after !== undefined);
  // Synchronous after-steps take no turn of the event loop either; an async one (recording an
  // Idempotency-Key's answer) is awaited before the next.
  const finish = (op: Operation<Caller, Context>, from = 0): void | Promise<void> => {
    for (let i = from; i < afters.length; i++) {
      const pending = afters[i].after!(op);
      if (pending) return pending.then(() => finish(op, i + 1));
    }
  };
  return {
    steps: used,
    async run(op) {
      for (const step of befores) {
        if (op.result || op.stream) break;
        try {
          const pending = step.before!(op);
          // Synchronous steps take no turn of the event loop.
          if (pending) await pending;
        } catch (err) {
          // A step that throws answers with its error (normalised like any other).
          op.result = { errors: [err] };
        }
      }
      const finishing = finish(op);
      if (finishing) await finishing;
      return op;
    },
    finish,
  };
}
