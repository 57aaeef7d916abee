// JSON serialised ahead of time, and sent as it is. A whole hub of 5,000 nodes and 20,000 edges is
// about 6 MiB of JSON: JSON.stringify of it held the event loop for ~25 ms on every GET. Its text is
// built once per graph version, a chunk at a time with the loop served between chunks
// (buildJsonArray), and a body whose top-level values are such texts is written by splicing them
// in (sendJson in ./http-app.ts, jsonBody here) instead of serialising them again.
//
// A GraphQL answer may hold such an array too (./plain-lists.ts): an array kept with its text
// (keepArrayText), found by its identity when the answer is serialised (answerJson: the gateway's
// /graphql, a subgraph's POST /graphql), so that a kept array is never serialised twice.
//
// The array serialised is remembered with its size as counted by the answer-size step
// (./response-size.ts), so that step counts it in one look instead of walking 25,000 objects.
import { setImmediate as nextTurn } from 'node:timers/promises';
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

/** A character a one-byte (Latin-1) string cannot hold: the string then takes 2 bytes a character. */
const WIDE = /[\u0100-\uffff]/;

/**
 * `items.map(form)` as the text of a JSON array, JSON_CHUNK_ITEMS at a time with a turn of the
 * event loop between chunks; `items` is remembered with its size for the answer-size step.
 */
async function arrayText<T>(
  items: readonly T[],
  form: (item: T) => unknown,
  kept?: ItemTexts,
  /** Look for wide characters (a scan of the whole text): only a kept array's bytes need it. */
  measure = false,
): Promise<{ text: string; wide: boolean }> {
  const parts: string[] = [];
  let size = 2 + items.length;
  let wide = false;
  for (let i = 0; i < items.length; i += JSON_CHUNK_ITEMS) {
    if (i > 0) await nextTurn();
    const chunk = items.slice(i, i + JSON_CHUNK_ITEMS);
    let part: string;
    if (kept) {
      part = chunk.map((item) => keptText(kept, item, form)).join(',');
      size += part.length;
    } else {
      for (const item of chunk) size += jsonAtLeast(item);
      part = JSON.stringify(chunk.map(form)).slice(1, -1);
    }
    if (measure) wide ||= WIDE.test(part);
    parts.push(part);
  }
  rememberJsonSize(items, size);
  return { text: `[${parts.join(',')}]`, wide };
}

/**
 * Items' JSON texts by the item's identity, for arrays made of long-lived items (a kept hub
 * graph's nodes and edges, which many answers pick from): each is serialised once and spliced into
 * every later array holding it. Items are never changed once kept (a new graph version has new ones).
 */
export type ItemTexts = WeakMap<object, string>;

function keptText<T>(kept: ItemTexts, item: T, form: (item: T) => unknown): string {
  if (typeof item !== 'object' || item === null) return JSON.stringify(form(item));
  let text = kept.get(item);
  if (text === undefined) kept.set(item, (text = JSON.stringify(form(item))));
  return text;
}

/**
 * `items.map(form)` as a JSON array, serialised JSON_CHUNK_ITEMS at a time with a turn of the
 * event loop between chunks: no one step holds the loop for the whole array. `items` (never
 * changed afterwards) is remembered with its size for the answer-size step. With `kept`, each
 * item's text is taken from it (or made once and put there) and spliced in.
 */
export async function buildJsonArray<T>(
  items: readonly T[],
  form: (item: T) => unknown,
  kept?: ItemTexts,
): Promise<JsonText> {
  return new JsonText(Buffer.from((await arrayText(items, form, kept)).text));
}

/** The texts of kept arrays, by the array's identity. */
const arrayTexts = new WeakMap<readonly unknown[], string>();
/** Answers' `data` holding a kept array somewhere. */
const holders = new WeakSet<object>();

/**
 * Serialises `items` (frozen: never changed afterwards) as buildJsonArray does, and keeps the text
 * with the array: answerJson puts it in wherever it meets this very array. Returns the text and
 * the bytes it holds (one or two a character, as V8 keeps it).
 */
export async function keepArrayText(items: readonly unknown[]): Promise<{ text: string; bytes: number }> {
  const { text, wide } = await arrayText(items, (x) => x, undefined, true);
  arrayTexts.set(items, text);
  return { text, bytes: text.length * (wide ? 2 : 1) };
}

/** Says that `data` (an answer's) holds a kept array, so that answerJson looks for it. */
export function markHoldsKeptText(data: object): void {
  holders.add(data);
}

/** Where a kept array's text lies in an answer's JSON: the array's path from the answer, its characters. */
export interface KeptRange {
  path: (string | number)[];
  start: number;
  end: number;
}

/**
 * Across a hop (a subgraph's POST /graphql to the gateway, lib/hop.ts), the kept ranges of the
 * answer's JSON as JSON, so that the next process keeps the texts of the arrays it parses
 * (keepRanges) and does not serialise them again either.
 */
export const KEPT_JSON_HEADER = 'x-kept-json';

/**
 * The JSON of a GraphQL answer (`{ data, errors, … }`): JSON.stringify's text, with the text of each
 * kept array its data holds put in as it is rather than serialised again.
 */
export function answerJson(answer: unknown): string {
  return keptAnswerJson(answer)?.text ?? JSON.stringify(answer);
}

/** answerJson's text and where the kept arrays' texts lie in it; undefined when its data holds none. */
export function keptAnswerJson(answer: unknown): { text: string; ranges: KeptRange[] } | undefined {
  const data = (answer as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null || !holders.has(data)) return undefined;
  const writer = new JsonWriter();
  writer.value(answer);
  return { text: writer.parts.join(''), ranges: writer.ranges };
}

/**
 * Keeps the texts of the arrays of a parsed answer that `header` (KEPT_JSON_HEADER) places in
 * `text`, the answer's JSON: the answer is then sent on with them put in. A range that does not
 * lead to an array, or is not one in the text, is left out.
 */
export function keepRanges(answer: { data?: unknown }, text: string, header: string): void {
  let ranges: unknown;
  try {
    ranges = JSON.parse(header);
  } catch {
    return;
  }
  if (!Array.isArray(ranges) || typeof answer.data !== 'object' || answer.data === null) return;
  let kept = false;
  for (const range of ranges as Partial<KeptRange>[]) {
    const { path, start, end } = range ?? {};
    if (!Array.isArray(path) || !Number.isInteger(start) || !Number.isInteger(end)) continue;
    if (text[start!] !== '[' || text[end! - 1] !== ']') continue;
    let at: unknown = answer;
    for (const key of path)
      at = typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined;
    if (!Array.isArray(at)) continue;
    arrayTexts.set(at, text.slice(start, end));
    // Its characters: no more than the bytes it takes, as the answer-size step counts.
    rememberJsonSize(at, end! - start!);
    kept = true;
  }
  if (kept) holders.add(answer.data);
}

const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';

/** JSON.stringify's text of a value, kept arrays' texts put in, and where they lie. */
class JsonWriter {
  readonly parts: string[] = [];
  readonly ranges: KeptRange[] = [];
  private length = 0;
  private readonly path: (string | number)[] = [];

  private push(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  /** A value JSON.stringify would not skip. */
  value(v: unknown): void {
    if (Array.isArray(v)) {
      const kept = arrayTexts.get(v);
      if (kept !== undefined) {
        this.ranges.push({ path: [...this.path], start: this.length, end: this.length + kept.length });
        return this.push(kept);
      }
      this.push('[');
      for (let i = 0; i < v.length; i++) {
        if (i > 0) this.push(',');
        this.path.push(i);
        if (skipped(v[i])) this.push('null');
        else this.value(v[i]);
        this.path.pop();
      }
      return this.push(']');
    }
    if (typeof v !== 'object' || v === null || typeof (v as { toJSON?: unknown }).toJSON === 'function')
      return this.push(JSON.stringify(v));
    let first = true;
    this.push('{');
    for (const key of Object.keys(v)) {
      const inner = (v as Record<string, unknown>)[key];
      if (skipped(inner)) continue;
      this.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      this.path.push(key);
      this.value(inner);
      this.path.pop();
    }
    this.push('}');
  }
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
