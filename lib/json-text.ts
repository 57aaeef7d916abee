// JSON serialised ahead of time, and sent as it is. A whole hub of 5,000 nodes and 20,000 edges is
// about 6 MiB of JSON: JSON.stringify of it held the event loop for ~25 ms on every GET. Its text is
// built once per graph version, a chunk at a time with the loop served between chunks
// (buildJsonArray), and a body whose top-level values are such texts is written by splicing them
// in (sendJson in ./http-app.ts, jsonBody here) instead of serialising them again.
//
// The array serialised is remembered with its size as counted by the answer-size step
// (./response-size.ts), so that step counts it in one look instead of walking 25,000 objects.
import { jsonAtLeast, rememberJsonSize } from './response-size';

/** JSON text to send as it is. `toJSON` keeps any other serialisation correct (at full cost). */
export class JsonText {
  constructor(readonly bytes: Buffer) {}
  toJSON(): unknown {
    return JSON.parse(this.bytes.toString('utf8'));
  }
}

/** Items serialised per chunk: a chunk of 500 hub nodes or edges takes well under a few ms. */
export const JSON_CHUNK_ITEMS = 500;

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * `items.map(form)` as a JSON array, serialised JSON_CHUNK_ITEMS at a time with a turn of the
 * event loop between chunks: no one step holds the loop for the whole array. `items` (never
 * changed afterwards) is remembered with its size for the answer-size step.
 */
export async function buildJsonArray<T>(items: readonly T[], form: (item: T) => unknown): Promise<JsonText> {
  const parts: Buffer[] = [Buffer.from('[')];
  let size = 2 + items.length;
  for (let i = 0; i < items.length; i += JSON_CHUNK_ITEMS) {
    if (i > 0) await yieldToLoop();
    const chunk = items.slice(i, i + JSON_CHUNK_ITEMS);
    for (const item of chunk) size += jsonAtLeast(item);
    const text = JSON.stringify(chunk.map(form));
    parts.push(Buffer.from((i > 0 ? ',' : '') + text.slice(1, -1)));
  }
  parts.push(Buffer.from(']'));
  rememberJsonSize(items, size);
  return new JsonText(Buffer.concat(parts));
}

/**
 * A plain object as the pieces of its JSON, its top-level JsonText values among them as they are
 * (written one after another, never copied into one buffer); undefined when it has none (then
 * JSON.stringify is as good).
 */
export function jsonBody(body: unknown): Buffer[] | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const entries = Object.entries(body);
  if (!entries.some(([, v]) => v instanceof JsonText)) return undefined;
  const parts: Buffer[] = [];
  for (const [key, value] of entries) {
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    parts.push(Buffer.from(`${parts.length ? ',' : '{'}${JSON.stringify(key)}:`));
    parts.push(value instanceof JsonText ? value.bytes : Buffer.from(JSON.stringify(value)));
  }
  parts.push(Buffer.from(parts.length ? '}' : '{}'));
  return parts;
}
