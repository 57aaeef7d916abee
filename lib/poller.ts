// A loop that does `work` every `intervalMs`, and at once after a transaction on `wakeOn`
// commits in this process; never two runs at the same time. Used by the outbox relay and
// the event stream: polling keeps several instances in step, waking keeps one process fast.
import type { DataSource } from 'typeorm';
import { onCommit } from './database/transactions';
import type { Logger } from './logger';

export interface Poller {
  /** Runs the work at once (or once more right after the current run). */
  wake(): void;
  stop(): Promise<void>;
}

export function startPoller(options: { intervalMs: number; work: () => Promise<void>; wakeOn?: DataSource; logger?: Logger; name: string }): Poller {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const tick = async () => {
    clearTimeout(timer);
    if (stopped) return;
    if (running) {
      again = true; // woken while working: run once more right after
      return;
    }
    running = options.work().catch((err) => options.logger?.warn({ err }, `${options.name} failed; retrying`));
    await running;
    running = undefined;
    if (stopped) return;
    if (again) {
      again = false;
      setImmediate(tick);
    } else timer = setTimeout(tick, options.intervalMs);
  };
  const stopListening = options.wakeOn ? onCommit(options.wakeOn, () => setImmediate(tick)) : undefined;
  timer = setTimeout(tick, 0);

  return {
    wake: () => setImmediate(tick),
    async stop() {
      stopped = true;
      stopListening?.();
      clearTimeout(timer);
      await running;
    },
  };
}
