// A loop that does `work` now and then, and at once after a transaction on `wakeOn` commits in
// this process; never two runs at the same time. Used by the outbox relays, the event-log
// readers and the synthesis workers: waking keeps one process fast, polling finds what other
// processes wrote. Polling backs off while it finds nothing (maxIntervalMs): an idle process
// then looks a few times a second in all instead of dozens (docs/idle-cost.md).
import type { DataSource } from 'typeorm';
import { onCommit } from './database/transactions';
import type { Logger } from './logger';

export interface Poller {
  /** Runs the work at once (or once more right after the current run). */
  wake(): void;
  stop(): Promise<void>;
}

export interface PollerOptions {
  name: string;
  /** The pause after a run that found something (and the first one after a wake). */
  intervalMs: number;
  /**
   * The longest pause: each run that finds nothing doubles it from intervalMs up to this.
   * Unset: a fixed intervalMs. How late a write by another process may be noticed.
   */
  maxIntervalMs?: number;
  /** Resolves true when it found something to do (the pause goes back to intervalMs). */
  work: () => Promise<boolean | void>;
  wakeOn?: DataSource;
  /** Another source of wake-ups (e.g. NATS messages, lib/wakeups.ts): subscribes `wake`, returns the unsubscribe. */
  wakeWith?: (wake: () => void) => () => void;
  /**
   * false: no timer while nothing is found; only wake-ups run the work (when every writer, in
   * any process, sends one). Default true.
   */
  idlePoll?: boolean;
  logger?: Logger;
}

export function startPoller(options: PollerOptions): Poller {
  const { intervalMs } = options;
  const maxIntervalMs = Math.max(intervalMs, options.maxIntervalMs ?? intervalMs);
  let pause = intervalMs;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<boolean> | undefined;
  let again = false;
  let stopped = false;
  let followUps = 0;

  const run = async () => {
    clearTimeout(timer);
    if (stopped) return;
    if (running) {
      again = true; // woken while working: run once more right after
      return;
    }
    running = options.work().then(
      (found) => found === true,
      (err) => {
        options.logger?.warn({ err }, `${options.name} failed; retrying`);
        return false;
      },
    );
    const found = await running;
    running = undefined;
    if (stopped) return;
    if (again) {
      again = false;
      setImmediate(tick);
      return;
    }
    if (found) pause = intervalMs;
    else if (options.idlePoll === false) {
      // The next wake-up runs it. A wake-up may come a moment before what it announces can be
      // read (a NATS message beside the stream's store): look again twice after one.
      if (followUps <= 0) return;
      followUps--;
      timer = setTimeout(tick, intervalMs);
      return;
    }
    timer = setTimeout(tick, pause);
    if (!found) pause = Math.min(pause * 2, maxIntervalMs);
  };
  // Timers want a void callback; run() handles the work's failure itself, this catches anything else.
  function tick() {
    run().catch((err) => options.logger?.warn({ err }, `${options.name} failed; retrying`));
  }
  const wake = () => {
    pause = intervalMs;
    followUps = 2;
    setImmediate(tick);
  };
  const stopListening = options.wakeOn ? onCommit(options.wakeOn, wake) : undefined;
  const stopWakeWith = options.wakeWith?.(wake);
  timer = setTimeout(tick, 0);

  return {
    wake,
    async stop() {
      stopped = true;
      stopListening?.();
      stopWakeWith?.();
      clearTimeout(timer);
      await running;
    },
  };
}
