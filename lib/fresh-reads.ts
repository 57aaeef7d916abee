// A read that many callers ask for at once (the event log's position: every stream and consumer of
// a process asks when a commit wakes them) done once for all of them, never older than the call:
// a caller that comes while a read is under way waits for the next one, which starts when that one
// ends and answers everyone who came meanwhile. So each caller's answer was read after it asked
// (it sees every commit made before it asked), and a burst of N callers costs at most two reads.

/** `read`, shared: concurrent callers get one read, each one started after they called. */
export function freshShared<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const current = read().finally(() => {
      if (running === current) running = undefined;
    });
    running = current;
    return current;
  };
  return () => {
    if (!running) return start();
    // One read is under way, begun maybe before this caller: it waits for the next.
    next ??= running
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}
