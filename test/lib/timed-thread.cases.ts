// The kit's thread with a time limit per call (lib/kit/timed-thread.ts), as the large request
// bodies (queued calls fail with an overrun) and the vault's page parser (queued calls retried)
// use it. A thread of its own that doubles numbers, fails, loops forever or exits on request.
import { TimedThread, type TimedThreadOptions } from '../../lib/kit/timed-thread';

const SOURCE = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', ({ id, op, value }) => {
  if (op === 'loop') for (;;);
  if (op === 'exit') process.exit(3);
  if (op === 'fail') return parentPort.postMessage({ id, error: 'no good' });
  parentPort.postMessage({ id, result: value * 2 });
});
`;
// Long enough for a thread to start on a loaded machine: only the looping calls take it.
const TIMEOUT_MS = 3000;

const threads: TimedThread[] = [];
function thread(queued: TimedThreadOptions['queued']): TimedThread {
  const t = new TimedThread({
    source: SOURCE,
    timeoutMs: TIMEOUT_MS,
    queued,
    overrun: (ms) => new Error(`overran ${ms} ms`),
    failed: (message) => new Error(`failed: ${message}`),
    stopped: (reason) => new Error(`stopped: ${reason}`),
  });
  threads.push(t);
  return t;
}
afterAll(() => Promise.all(threads.map((t) => t.stop())));

it("answers each call with the thread's result, or the failed error with the thread's message", async () => {
  const t = thread('fail');
  await expect(Promise.all([1, 2, 3].map((value) => t.call({ op: 'double', value })))).resolves.toEqual([2, 4, 6]);
  await expect(t.call({ op: 'fail' })).rejects.toThrow('failed: no good');
  await expect(t.call({ op: 'double', value: 5 })).resolves.toBe(10);
});

it('moves what a call transfers to the thread', async () => {
  const t = thread('fail');
  const bytes = new Uint8Array(1024);
  await expect(t.call({ op: 'double', value: 1, bytes }, [bytes.buffer])).resolves.toBe(2);
  expect(bytes.byteLength).toBe(0);
});

it("queued: 'fail' fails the call that overran and those queued behind it; a new thread takes the next", async () => {
  const t = thread('fail');
  const looping = t.call({ op: 'loop' });
  const queued = t.call({ op: 'double', value: 21 });
  await expect(looping).rejects.toThrow(`overran ${TIMEOUT_MS} ms`);
  await expect(queued).rejects.toThrow(`overran ${TIMEOUT_MS} ms`);
  await expect(t.call({ op: 'double', value: 4 })).resolves.toBe(8);
});

it("queued: 'retry' fails only the call that overran: those queued behind it are answered by a new thread", async () => {
  const t = thread('retry');
  const looping = t.call({ op: 'loop' });
  const queued = [t.call({ op: 'double', value: 21 }), t.call({ op: 'double', value: 1 })];
  await expect(looping).rejects.toThrow(`overran ${TIMEOUT_MS} ms`);
  await expect(Promise.all(queued)).resolves.toEqual([42, 2]);
});

it('fails the calls under way with the stopped error when the thread exits, and starts a new one for the next', async () => {
  const t = thread('retry');
  const exiting = t.call({ op: 'exit' });
  await expect(exiting).rejects.toThrow('stopped: exit code 3');
  await expect(t.call({ op: 'double', value: 3 })).resolves.toBe(6);
});
