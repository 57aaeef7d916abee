// The kit's gate on expensive operations (lib/kit/expensive.ts): beyond EXPENSIVE_PER_USER of a
// user's at once, refused; a refusal held EXPENSIVE_REFUSAL_HOLD_MS, at most EXPENSIVE_REFUSALS_HELD
// at once. Fake timers: this checks when a refusal comes, not how fast anything is.
import { AppError } from '../../lib/errors';
import { expensiveGate } from '../../lib/kit/expensive';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

const settings = { EXPENSIVE_PER_USER: 1, EXPENSIVE_REFUSAL_HOLD_MS: 250, EXPENSIVE_REFUSALS_HELD: 2 };

/** Resolves with what `promise` settled to, and records when (fake ms). */
function timed<T>(promise: Promise<T>) {
  const start = Date.now();
  const out: { at?: number; value?: unknown } = {};
  const done = promise.then(
    (value) => Object.assign(out, { at: Date.now() - start, value }),
    (error: unknown) => Object.assign(out, { at: Date.now() - start, value: error }),
  );
  return { out, done };
}

it('holds a refusal EXPENSIVE_REFUSAL_HOLD_MS before it comes, and does not hold the work of a user with a free slot', async () => {
  const gate = expensiveGate(settings);
  let release!: () => void;
  const running = gate.run('u', 'search', () => new Promise<void>((resolve) => (release = resolve)));
  await jest.advanceTimersByTimeAsync(0); // past the gate's yield: the slot is taken
  expect(gate.held('u')).toBe(1);
  const refused = timed(gate.run('u', 'search', () => Promise.resolve('ran')));
  const other = timed(gate.run('v', 'search', () => Promise.resolve('ran')));
  await jest.advanceTimersByTimeAsync(1);
  // Not held: done within the gate's two turns of the loop (before and after the work).
  expect(other.out.value).toBe('ran');
  expect(other.out.at).toBeLessThanOrEqual(1);
  await jest.advanceTimersByTimeAsync(240);
  expect(refused.out.at).toBeUndefined();
  await jest.advanceTimersByTimeAsync(10);
  await refused.done;
  expect(refused.out.at).toBe(250);
  expect(refused.out.value).toBeInstanceOf(AppError);
  expect((refused.out.value as AppError).code).toBe('rate_limit_exceeded');
  release();
  await jest.advanceTimersByTimeAsync(1); // the gate's turn after the work
  await running;
});

it('sends refusals at once beyond EXPENSIVE_REFUSALS_HELD held, and at once when the hold is 0', async () => {
  const gate = expensiveGate(settings);
  const holds = [0, 1, 2].map(() => timed(gate.holdRefusal()));
  await jest.advanceTimersByTimeAsync(0);
  expect(holds.map((h) => h.out.at)).toEqual([undefined, undefined, 0]);
  await jest.advanceTimersByTimeAsync(250);
  expect(holds.map((h) => h.out.at)).toEqual([250, 250, 0]);
  // Released holds make room again.
  const again = timed(gate.holdRefusal());
  await jest.advanceTimersByTimeAsync(0);
  expect(again.out.at).toBeUndefined();
  await jest.advanceTimersByTimeAsync(250);
  expect(again.out.at).toBe(250);

  const unheld = expensiveGate({ ...settings, EXPENSIVE_REFUSAL_HOLD_MS: 0 });
  const now = timed(unheld.holdRefusal());
  await jest.advanceTimersByTimeAsync(0);
  expect(now.out.at).toBe(0);
});
