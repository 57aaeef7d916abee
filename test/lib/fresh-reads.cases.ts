// lib/fresh-reads.ts: concurrent callers share reads, and no caller gets a read begun before it asked.
import { freshShared } from '../../lib/fresh-reads';

/** A read whose answers the test releases one by one: each answers the number of reads begun. */
function controlledRead() {
  const pending: { resolve: (v: number) => void; reject: (e: Error) => void }[] = [];
  let begun = 0;
  const read = () =>
    new Promise<number>((resolve, reject) => {
      begun++;
      const n = begun;
      pending.push({ resolve: () => resolve(n), reject });
    });
  return { read, pending, begun: () => begun };
}

const flush = () => new Promise((r) => setImmediate(r));

it('gives callers who come together one read, and those who come during it the next one', async () => {
  const source = controlledRead();
  const position = freshShared(source.read);
  const first = position();
  expect(source.begun()).toBe(1);
  // Four more while the first read is under way: they may not take it (begun before they asked).
  const later = [position(), position(), position(), position()];
  expect(source.begun()).toBe(1);
  source.pending[0].resolve(0);
  expect(await first).toBe(1);
  await flush();
  expect(source.begun()).toBe(2);
  source.pending[1].resolve(0);
  expect(await Promise.all(later)).toEqual([2, 2, 2, 2]);
  // Nothing under way: the next caller starts its own.
  const alone = position();
  expect(source.begun()).toBe(3);
  source.pending[2].resolve(0);
  expect(await alone).toBe(3);
});

it('passes a failed read to its callers only; those waiting for the next still get theirs', async () => {
  const source = controlledRead();
  const position = freshShared(source.read);
  const failing = position();
  const waiting = position();
  source.pending[0].reject(new Error('lost'));
  await expect(failing).rejects.toThrow('lost');
  await flush();
  source.pending[1].resolve(0);
  expect(await waiting).toBe(2);
});
