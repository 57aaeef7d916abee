// Back-pressure on /graphql/stream: graphql-sse would queue whatever the socket has not taken,
// so the stream is paused while a reader lags, and cut off when it stops reading.
import type { ServerResponse } from 'node:http';

/** Results that may wait in graphql-sse's queue for the socket before the source is paused. */
const MAX_UNWRITTEN_RESULTS = 4;

/**
 * graphql-sse pulls results as fast as they come and queues what the socket has not taken.
 * This gate counts the result frames handed to the socket (write callbacks) against those
 * pulled, and makes the stream wait while too many are unwritten: a reader that takes nothing
 * for `stallMs` is cut off, as on the REST bridge, and the event stream's own bounded buffer
 * (EVENT_BUFFER_SIZE) applies meanwhile. The gate resolves false when the stream should end.
 */
export function writeGate(res: ServerResponse, stallMs: number): () => Promise<boolean> {
  let pulled = 0;
  let written = 0;
  let wake: (() => void) | undefined;
  let closed = false;
  res.once('close', () => {
    closed = true;
    wake?.();
  });
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    const callback =
      typeof rest[rest.length - 1] === 'function' ? (rest.pop() as (err?: Error | null) => void) : undefined;
    const isResult = typeof chunk === 'string' && chunk.startsWith('event: next');
    return write(chunk, ...rest, (err?: Error | null) => {
      if (isResult) written++;
      wake?.();
      callback?.(err);
    });
  }) as typeof res.write;
  return async () => {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<void>((resolve) => (timer = setTimeout(resolve, stallMs)));
    let timedOut = false;
    void stalled.then(() => ((timedOut = true), wake?.()));
    try {
      while (!closed && !timedOut && pulled - written >= MAX_UNWRITTEN_RESULTS) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      clearTimeout(timer);
    }
    if (closed) return false;
    if (timedOut) {
      res.destroy(); // it stopped reading: cut it off (it resumes from its last position)
      return false;
    }
    pulled++;
    return true;
  };
}
