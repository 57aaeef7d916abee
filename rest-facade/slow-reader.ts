// Waiting for a reader to take what was written, with a deadline: a client that stops reading
// must not hold an answer (and its socket buffers) open for ever.
import { once } from 'node:events';
import type http from 'node:http';

/** True once the response drains; false when it closes or has not drained within `ms`. */
export async function drained(res: http.ServerResponse, closed: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      once(res, 'drain').then(
        () => true,
        () => false,
      ),
      closed.then(() => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
