// Waiting for a condition instead of sleeping: a test that sleeps races its own timers on a
// busy machine; one that polls the condition only takes as long as the condition needs.

/** Resolves with the first truthy value of `probe`; rejects after `timeoutMs` naming `what`. */
export async function until<T>(
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  what = 'the condition',
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
