// A worker thread whose every call has a time limit, for work that must not hold the event loop
// and may never end on hostile input (a request body's JSON.parse: lib/large-bodies.ts; a fetched
// page's DOM and Readability: subgraphs/vault/parser-thread.ts). A call that overruns its limit
// cannot be interrupted otherwise: the thread is terminated, and the next call starts a new one.
//
// The thread's side: `parentPort.on('message', ({ id, ...message }) => …)` answers each call with
// `parentPort.postMessage({ id, result })`, or `{ id, error: <message> }` when it failed.
import { Worker, type ResourceLimits, type Transferable } from 'node:worker_threads';

export interface TimedThreadOptions {
  /** The thread's code, as source text (it runs outside any module loader of the caller). */
  source: string;
  /** Handed to the thread as `workerData` (e.g. the resolved paths of the libraries it loads). */
  workerData?: unknown;
  /** A hostile input cannot take the process's memory with it. */
  resourceLimits?: ResourceLimits;
  /**
   * The longest a call may take, from when it is sent to the thread (or, with `announcesReady`,
   * from when the thread is ready); Infinity: no limit (see TimedThreadPool's `answerWithinMs`).
   */
  timeoutMs: number;
  /**
   * The thread posts `{ ready: true }` once it has loaded its libraries, and a call's time limit
   * starts then: on a busy machine loading can take most of the limit, and a thread replaced after
   * an overrun would otherwise overrun again while loading.
   */
  announcesReady?: boolean;
  /**
   * What becomes of the calls sent to a thread behind one that overran: `fail` them with the same
   * error (they were held up as long), or `retry` each on the new thread with a time limit of its own.
   */
  queued: 'fail' | 'retry';
  /** The call overran timeoutMs. */
  overrun: (timeoutMs: number) => Error;
  /** The thread answered with an error message. */
  failed: (message: string) => Error;
  /** The thread stopped (it threw outside a call, ran out of memory, exited) with calls under way. */
  stopped: (reason: string) => Error;
}

interface Pending {
  message: Record<string, unknown>;
  transfer?: readonly Transferable[];
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer?: NodeJS.Timeout;
}

/** One thread, replaced when a call overruns its time or the thread dies. */
export class TimedThread {
  private worker?: Worker;
  /** Resolves when the current thread is ready for calls. */
  private ready: Promise<void> = Promise.resolve();
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly options: TimedThreadOptions) {}

  /** Calls sent and not yet answered: a pool sends the next call to the thread with the fewest. */
  get waiting(): number {
    return this.pending.size;
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const { source, workerData, resourceLimits } = this.options;
    const worker = new Worker(source, { eval: true, workerData, resourceLimits });
    let loaded = () => {};
    this.ready = this.options.announcesReady ? new Promise<void>((resolve) => (loaded = resolve)) : Promise.resolve();
    type Answer = { id: number; result?: unknown; error?: string; ready?: boolean };
    worker.on('message', ({ id, result, error, ready }: Answer) => {
      if (ready) return loaded();
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      clearTimeout(p.timer);
      if (error !== undefined) p.reject(this.options.failed(error));
      else p.resolve(result);
    });
    const fail = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        this.pending.delete(id);
        p.reject(this.options.stopped(reason));
      }
    };
    worker.on('error', (err) => fail(err.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
    // After the listeners: adding a 'message' listener refs the thread again, and kept the process alive.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** Sends a call to the (current) thread, with its own time limit. */
  private dispatch(id: number, entry: Pending): void {
    const worker = this.thread();
    const { timeoutMs, queued, overrun } = this.options;
    void this.ready.then(() => {
      // Answered, failed or timed out meanwhile (its thread died while loading): nothing to send.
      if (this.pending.get(id) !== entry || this.worker !== worker) return;
      if (Number.isFinite(timeoutMs))
        entry.timer = setTimeout(() => {
          this.pending.delete(id);
          entry.reject(overrun(timeoutMs));
          if (this.worker === worker) this.worker = undefined;
          void worker.terminate();
          for (const [other, p] of this.pending) {
            clearTimeout(p.timer);
            if (queued === 'retry') this.dispatch(other, p);
            else {
              this.pending.delete(other);
              p.reject(overrun(timeoutMs));
            }
          }
        }, timeoutMs);
      worker.postMessage({ ...entry.message, id }, entry.transfer);
    });
  }

  /**
   * The thread's result for `message`. What `transfer` lists is moved to the thread, not copied
   * (the caller must not use it again; not with `queued: 'retry'`, which may send a call twice).
   */
  call<T>(message: Record<string, unknown>, transfer?: readonly Transferable[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { message, transfer, resolve: resolve as (value: unknown) => void, reject };
      this.pending.set(id, entry);
      this.dispatch(id, entry);
    });
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }
}

export interface TimedThreadPoolOptions {
  size: number;
  /**
   * The longest a caller waits for its answer, its wait for a free thread included; beyond, the
   * call fails with `late`. Its thread is not stopped: it stays busy until its call ends (for work
   * that terminating the thread would not stop, such as a native SQLite statement, which keeps
   * running, and keeps the process from exiting, in a thread told to terminate).
   */
  answerWithinMs?: number;
  late?: (ms: number) => Error;
}

/**
 * Up to `size` threads, each started on its first call and given one call at a time: the others
 * wait here, so that a thread's own time limit (`timeoutMs`, may be Infinity) counts its call's
 * run, never a wait behind another's. Calls are answered in no particular order.
 */
export class TimedThreadPool {
  private readonly threads: TimedThread[] = [];
  private readonly idle: TimedThread[] = [];
  private readonly queue: ((thread: TimedThread) => void)[] = [];

  constructor(
    private readonly options: TimedThreadOptions,
    private readonly pool: TimedThreadPoolOptions,
  ) {}

  /** Calls running or waiting for a thread (tests, metrics). */
  get pending(): number {
    return this.threads.length - this.idle.length + this.queue.length;
  }

  private take(use: (thread: TimedThread) => void): void {
    const free = this.idle.pop();
    if (free) return use(free);
    if (this.threads.length < this.pool.size) {
      const thread = new TimedThread(this.options);
      this.threads.push(thread);
      return use(thread);
    }
    this.queue.push(use);
  }

  private give(thread: TimedThread): void {
    const next = this.queue.shift();
    if (next) next(thread);
    else this.idle.push(thread);
  }

  call<T>(message: Record<string, unknown>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let answered = false;
      const use = (thread: TimedThread) => {
        const done = (settle: () => void) => {
          clearTimeout(timer);
          if (!answered) settle();
          answered = true;
          this.give(thread);
        };
        thread.call<T>(message).then(
          (value) => done(() => resolve(value)),
          (err: Error) => done(() => reject(err)),
        );
      };
      const { answerWithinMs, late } = this.pool;
      const timer =
        answerWithinMs === undefined
          ? undefined
          : setTimeout(() => {
              answered = true;
              // Still waiting for a thread: it will not need one.
              const waiting = this.queue.indexOf(use);
              if (waiting >= 0) this.queue.splice(waiting, 1);
              reject(late ? late(answerWithinMs) : new Error(`no answer within ${answerWithinMs} ms`));
            }, answerWithinMs);
      this.take(use);
    });
  }

  async stop(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.stop()));
  }
}
