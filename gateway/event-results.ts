// A subscription's results: each event executed once for all who share the operation, the
// stream ended when the caller's token expires or the reader stops taking results.
import { DocumentNode, execute, ExecutionResult, GraphQLSchema } from 'graphql';
import { AppError } from '../lib/errors';
import type { StreamEvent } from '../lib/event-stream';
import { errorResult } from '../lib/graphql-errors';
import type { FormattedResult } from '../lib/operation-pipeline';
import type { EventsContext } from './events-schema';

/** A subscription's results: event results, and a last error result when the token expires. */
export type EventResult = ExecutionResult | FormattedResult;
export type EventResults = AsyncGenerator<EventResult>;

export interface MapOptions {
  /** When the caller's access token expires: the stream then ends with a last error result. */
  expiresAt: Date;
  /** Called once when the stream ends, however it ends. */
  onEnd: () => void;
  /** Waits until the reader has taken what it was given; false: it stopped reading (end the stream). */
  ready?: () => Promise<boolean>;
}

const tokenExpired = (): FormattedResult =>
  errorResult(
    new AppError(
      'unauthorized',
      'The access token has expired: reconnect with a fresh token (and your last position to resume).',
    ),
  );

/**
 * The results of a source stream; return() reaches the source at once (it may be waiting). It
 * ends when the caller's token expires or the source refuses to go on (with an error result
 * saying so: lib/event-stream.ts's `refuse`) and when the reader
 * stops taking results (the source then stops being pulled, so nothing piles up here).
 */
export function mapEvents(
  source: AsyncGenerator<StreamEvent>,
  map: (event: StreamEvent) => Promise<ExecutionResult>,
  options: MapOptions,
): EventResults {
  let done = false;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(
      () => resolve('expired'),
      Math.max(0, Math.min(options.expiresAt.getTime() - Date.now(), 2 ** 31 - 1)),
    );
  });
  const end = async (): Promise<IteratorResult<EventResult>> => {
    if (!done) {
      done = true;
      clearTimeout(timer);
      options.onEnd();
    }
    await source.return(undefined);
    return { done: true, value: undefined };
  };
  const mapped = {
    async next(): Promise<IteratorResult<EventResult>> {
      if (done) return { done: true, value: undefined };
      if (options.ready && !(await options.ready())) return end();
      let item: IteratorResult<StreamEvent> | 'expired';
      try {
        item = await Promise.race([source.next(), expired]);
      } catch (err) {
        // The source refused to go on (the caller lost its scope or account): a last error result.
        if (!(err instanceof AppError)) throw err;
        await end();
        return { done: false, value: errorResult(err) };
      }
      if (item === 'expired') {
        await end();
        return { done: false, value: tokenExpired() };
      }
      if (item.done) return end();
      return { done: false, value: await map(item.value) };
    },
    return: end,
    async throw(err: unknown): Promise<IteratorResult<EventResult>> {
      await end();
      throw err;
    },
    [Symbol.asyncIterator]() {
      return mapped;
    },
  };
  // An async generator in all but [Symbol.asyncDispose], which the types ask for and nobody here calls.
  return mapped as unknown as EventResults;
}

/** Executions remembered per operation document, the oldest forgotten first. */
const SHARED_RESULTS_PER_DOCUMENT = 1000;

/**
 * One execution per event, operation and variables, shared by every subscriber receiving that
 * event with that operation (an Event's fields depend only on the event): with many streams
 * of one user, an event is turned into a result once, not once per stream.
 */
export function sharedResults(schema: GraphQLSchema) {
  const shared = new WeakMap<DocumentNode, Map<string, Promise<ExecutionResult>>>();
  return function resultFor(
    document: DocumentNode,
    variables: Record<string, unknown> | null | undefined,
    event: StreamEvent,
    contextValue: EventsContext,
  ): Promise<ExecutionResult> {
    let byKey = shared.get(document);
    if (!byKey) shared.set(document, (byKey = new Map<string, Promise<ExecutionResult>>()));
    const key = `${event.seq}|${JSON.stringify(variables ?? {})}`;
    let result = byKey.get(key);
    if (!result) {
      result = Promise.resolve(
        execute({ schema, document, rootValue: event, contextValue, variableValues: variables }),
      );
      if (byKey.size >= SHARED_RESULTS_PER_DOCUMENT) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, result);
    }
    return result;
  };
}
