// Expensive operations (searches, neighbours, and later imports and exports): at most
// EXPENSIVE_PER_USER of one user's run at once in a process, the rest are refused at once with
// 429 `rate_limit_exceeded` and `Retry-After`, so that one user at full rate holds a bounded share
// of the database and the event loop and the others keep theirs (issue 41 finding 2). One gate per
// process, shared by every module that runs in it: a user cannot take 2 slots per module.
//
// Also the register of the GraphQL fields that run one: the operation limits
// (lib/operation-pipeline/limits.ts) allow at most GRAPHQL_MAX_EXPENSIVE_FIELDS of them per
// operation, so that aliases cannot put 20 searches in one request.
//
// A refusal is held EXPENSIVE_REFUSAL_HOLD_MS before it is sent: a caller that ignores Retry-After
// and asks again at once would otherwise turn refusals into a flood of its own (20 such clients
// sent ~1,100 refusals a second and kept the event loop busy answering them, so another user's
// reads waited 6× their idle time). Held, each connection asks at most once per hold; a timer
// costs no CPU. At most EXPENSIVE_REFUSALS_HELD are held at once; beyond, they are sent at once.
import { AppError } from '../errors';

/** A turn of the event loop, on the global setImmediate (which the gate's tests fake with their clock). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export type ExpensiveKind = 'search' | 'neighbors' | 'import' | 'export';

export interface ExpensiveGate {
  /** Runs `work` in one of the user's slots; none free: 429 with Retry-After, and `work` never starts. */
  run<T>(userId: string, kind: ExpensiveKind, work: () => Promise<T>): Promise<T>;
  /** Slots the user holds now (for tests and metrics). */
  held(userId: string): number;
  /**
   * What `run` would refuse now with, without making an error (no stack trace): for the early
   * refusal of the REST facade, before the request's operation is even looked at. Undefined
   * when the user has a free slot.
   */
  refusal(userId: string, kind: ExpensiveKind): ExpensiveRefusal | undefined;
  /** Waits out the hold of a refusal (above) before it is sent. */
  holdRefusal(): Promise<void>;
}

export interface ExpensiveRefusal {
  message: string;
  details: { limit: 'EXPENSIVE_PER_USER'; max: number; kind: ExpensiveKind };
  retryAfter: number;
}

/** Seconds a refused caller is told to wait: one expensive operation is bounded well under it. */
const RETRY_AFTER_SECONDS = 1;

export interface ExpensiveSettings {
  EXPENSIVE_PER_USER: number;
  EXPENSIVE_REFUSAL_HOLD_MS: number;
  EXPENSIVE_REFUSALS_HELD: number;
}

export function expensiveGate(settings: ExpensiveSettings): ExpensiveGate {
  const {
    EXPENSIVE_PER_USER: maxPerUser,
    EXPENSIVE_REFUSAL_HOLD_MS: holdMs,
    EXPENSIVE_REFUSALS_HELD: maxHeld,
  } = settings;
  const running = new Map<string, number>();
  let held = 0;
  const holdRefusal = async () => {
    if (holdMs === 0 || held >= maxHeld) return;
    held++;
    try {
      await new Promise<void>((resolve) => setTimeout(resolve, holdMs).unref());
    } finally {
      held--;
    }
  };
  const refusal = (kind: ExpensiveKind): ExpensiveRefusal => ({
    message: `You have ${maxPerUser} expensive operations (searches, neighbours, imports, exports) running; wait for one to end.`,
    details: { limit: 'EXPENSIVE_PER_USER', max: maxPerUser, kind },
    retryAfter: RETRY_AFTER_SECONDS,
  });
  return {
    refusal: (userId, kind) => ((running.get(userId) ?? 0) >= maxPerUser ? refusal(kind) : undefined),
    holdRefusal,
    async run(userId, kind, work) {
      const now = running.get(userId) ?? 0;
      if (now >= maxPerUser) {
        await holdRefusal();
        const { message, details, retryAfter } = refusal(kind);
        throw new AppError('rate_limit_exceeded', message, details, retryAfter);
      }
      running.set(userId, now + 1);
      try {
        // Back to the event loop before the work: on SQLite the work may run to its end without
        // yielding (synchronous statements), so without this no two of a user's operations
        // would ever overlap and the limit would refuse none; now requests that arrived
        // meanwhile find the slot taken, and others' requests run first.
        await nextTurn();
        const result = await work();
        // And back again after it: what follows (the answer's completion, serialisation, sending)
        // is another stretch of the loop, and requests that arrived during the work go first.
        await nextTurn();
        return result;
      } finally {
        const left = (running.get(userId) ?? 1) - 1;
        if (left > 0) running.set(userId, left);
        else running.delete(userId);
      }
    },
    held: (userId) => running.get(userId) ?? 0,
  };
}

const gates = new Map<string, ExpensiveGate>();

/**
 * The process's gate for these settings: every module of a process that reads the same ones
 * shares one (several servers with other values, in tests, get their own).
 */
export function sharedExpensiveGate(config: ExpensiveSettings): ExpensiveGate {
  const key = `${config.EXPENSIVE_PER_USER} ${config.EXPENSIVE_REFUSAL_HOLD_MS} ${config.EXPENSIVE_REFUSALS_HELD}`;
  let gate = gates.get(key);
  if (!gate) gates.set(key, (gate = expensiveGate(config)));
  return gate;
}

/** A root field that runs an expensive operation; with `whenArgument`, only when that argument is given. */
export interface ExpensiveField {
  type: 'Query' | 'Mutation';
  field: string;
  whenArgument?: string;
  /** The kind its refusal names (lib/operation-pipeline/expensive-early.ts). */
  kind: ExpensiveKind;
}

const fields = new Map<string, ExpensiveField>();

/** A module declares its expensive fields when it is created; the process's operation limits count them. */
export function declareExpensiveFields(list: ExpensiveField[]): void {
  for (const f of list) fields.set(`${f.type}.${f.field}`, f);
}

/** The names of every declared field (the early refusal's first, textual look at a document). */
export function expensiveFieldNames(): string[] {
  return [...new Set([...fields.values()].map((f) => f.field))];
}

/** The declared field at `Type.field`, if any. */
export function expensiveField(type: string, field: string): ExpensiveField | undefined {
  return fields.get(`${type}.${field}`);
}
