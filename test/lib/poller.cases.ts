// The poller's back-off (lib/poller.ts): an idle poller looks less and less often, up to its
// maximum, and at its shortest pause again once it finds something or is woken. Fake timers:
// this checks the schedule, not how fast anything is.
import { startPoller } from '../../lib/poller';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** A poller whose work answers from `found` and records when it ran (fake ms since start). */
function recorded(found: () => boolean, options: { intervalMs: number; maxIntervalMs?: number }) {
  const runs: number[] = [];
  const start = Date.now();
  const poller = startPoller({
    name: 'test',
    ...options,
    work: async () => {
      runs.push(Date.now() - start);
      return found();
    },
  });
  return { runs, poller };
}

it('doubles its pause while it finds nothing, up to the maximum', async () => {
  const { runs, poller } = recorded(() => false, { intervalMs: 50, maxIntervalMs: 400 });
  await jest.advanceTimersByTimeAsync(2000);
  await poller.stop();
  // Pauses 50, 100, 200, 400, 400, …
  expect(runs.slice(0, 7)).toEqual([0, 50, 150, 350, 750, 1150, 1550]);
});

it('keeps its shortest pause while it finds something, and starts backing off when it stops', async () => {
  let busy = true;
  const { runs, poller } = recorded(() => busy, { intervalMs: 50, maxIntervalMs: 400 });
  await jest.advanceTimersByTimeAsync(200);
  expect(runs).toEqual([0, 50, 100, 150, 200]);
  busy = false;
  await jest.advanceTimersByTimeAsync(400);
  await poller.stop();
  expect(runs.slice(5)).toEqual([250, 300, 400, 600]);
});

it('runs at once when woken, and its pause starts again from the shortest', async () => {
  const { runs, poller } = recorded(() => false, { intervalMs: 50, maxIntervalMs: 1000 });
  await jest.advanceTimersByTimeAsync(1600); // 0, 50, 150, 350, 750, 1550: the next pause is 1000
  const before = runs.length;
  poller.wake();
  await jest.advanceTimersByTimeAsync(1);
  expect(runs.length).toBe(before + 1);
  const woken = runs[runs.length - 1];
  await jest.advanceTimersByTimeAsync(200);
  await poller.stop();
  expect(runs.slice(before).map((t) => t - woken)).toEqual([0, 50, 150]);
});

it('without a maximum keeps a fixed pause', async () => {
  const { runs, poller } = recorded(() => false, { intervalMs: 50 });
  await jest.advanceTimersByTimeAsync(200);
  await poller.stop();
  expect(runs).toEqual([0, 50, 100, 150, 200]);
});
