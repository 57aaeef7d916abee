// One array member of a JSON object (`{"bookmarks": [ {…}, {…} ]}`), read with stream-json an
// element at a time, so that a file of hundreds of MiB is never held whole: its tokenizer, path
// filter (pick) and assembler (streamArray) do the reading. The text is fed a slice at a time
// with a turn of the event loop between slices, and each slice's elements are handed over (and
// awaited) before the next slice is read. The small pieces here check that the root is an object
// (noting its array members) and bound an element's size: the parser hands strings over in
// pieces (it never holds one whole), which are counted and joined here, and an element past the
// limit is dropped as it is read (streamArray's objectFilter) and handed over as TOO_LONG.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { parser, type Token } from 'stream-json/parser.js';
import { pick } from 'stream-json/filters/pick.js';
import { streamArray, type StreamArrayItem } from 'stream-json/streamers/stream-array.js';
import { getManyValues, none } from 'stream-chain';
import type { Many } from 'stream-chain/defs.js';
import { fun } from 'stream-chain/fun.js';

export class JsonShapeError extends Error {}

/** What is handed over in place of an element longer than the limit. */
export const TOO_LONG: unique symbol = Symbol('too long');

/** Text fed to the parser at once: 64 Ki characters take a few ms. */
const SLICE_CHARS = 64 * 1024;

export interface ReadArrayOptions {
  /** The longest element, in characters of its strings, keys and numbers (about its JSON length). */
  maxElementChars: number;
  /** Stop reading once the array has ended: the rest of the file is neither read nor checked. */
  stopAfter?: boolean;
}

/**
 * Hands each element of the root object's `key` array (when it is an array) to `onElement`, in
 * order; answers the keys of the root's members whose values are arrays (those read, with
 * `stopAfter`). Malformed or cut JSON, or a key or number longer than the limit, throws
 * JsonShapeError; what `onElement` throws is thrown as it is.
 */
export async function readJsonArray(
  pieces: AsyncIterable<string>,
  key: string,
  onElement: (value: unknown, index: number) => void | Promise<void>,
  { maxElementChars, stopAfter = false }: ReadArrayOptions,
): Promise<ReadonlySet<string>> {
  const root = new RootMembers(key);
  const guard = new ElementGuard(maxElementChars);
  const run = fun(
    // Keys and numbers packed (the path filter needs keys whole), strings in pieces only.
    parser({ packStrings: false, streamKeys: false, streamNumbers: false, maxPackedLength: maxElementChars }),
    pick({ filter: root.filter }),
    guard.stage,
    streamArray({ objectFilter: () => (guard.over ? false : undefined), includeUndecided: true }),
  );
  /** The text begins an object (its first character other than white space or a byte-order mark). */
  let opened = false;
  const step = async (text: string | typeof none): Promise<StreamArrayItem[]> => {
    try {
      // `none` flushes the stages (the end of the text), which fun's types leave out.
      return getManyValues((await run(text as string)) as Many<StreamArrayItem>);
    } catch (err) {
      if (err instanceof JsonShapeError) throw err;
      const message = (err as Error).message;
      if (err instanceof RangeError) throw new JsonShapeError(message); // too deep, or a key or number too long
      if (!opened) throw new JsonShapeError('not a JSON object');
      if (text !== none) throw new JsonShapeError(`the JSON is malformed (${message})`);
      throw new JsonShapeError(`the JSON ends before its end (a cut file?): ${message}`);
    }
  };
  let handed = 0;
  /** The elements streamArray dropped up to the next one it hands over (each ended before it). */
  const handDropped = async () => {
    while (guard.dropped[0] === handed) {
      guard.dropped.shift();
      await onElement(TOO_LONG, handed++);
    }
  };
  const hand = async (items: StreamArrayItem[]) => {
    for (const { value } of items) {
      await handDropped();
      await onElement(value, handed++);
    }
  };
  for await (const text of pieces) {
    for (let at = 0; at < text.length; at += SLICE_CHARS) {
      await nextTurn();
      const slice = text.slice(at, at + SLICE_CHARS);
      if (!opened) {
        const first = /[^ \t\n\r\uFEFF]/.exec(slice)?.[0];
        if (first !== undefined && first !== '{') throw new JsonShapeError('not a JSON object');
        opened = first === '{';
      }
      await hand(await step(slice));
      if (stopAfter && guard.ended) return root.arrays;
    }
  }
  await hand(await step(none));
  await handDropped();
  return root.arrays;
}

/** pick's filter: the root's member `key` when it is an array; it notes which members are arrays. */
class RootMembers {
  readonly arrays = new Set<string>();

  constructor(private readonly key: string) {}

  readonly filter = (stack: (string | number | null)[], token: Token): boolean => {
    if (stack.length !== 1 || token.name !== 'startArray') return false;
    this.arrays.add(String(stack[0]));
    return stack[0] === this.key;
  };
}

/** The tokens that begin a value. */
const BEGINS = new Set<Token['name']>([
  'startObject',
  'startArray',
  'startString',
  'numberValue',
  'nullValue',
  'trueValue',
  'falseValue',
]);

/** Counts each element's size as its tokens pass, and joins its strings' pieces. */
class ElementGuard {
  /** The element being read is past the limit: streamArray drops it. */
  over = false;
  /** The array has closed. */
  ended = false;
  /** The indexes of the elements past the limit, not handed over yet. */
  readonly dropped: number[] = [];
  /** The elements begun. */
  private elements = 0;
  /** 0 outside the array, 1 between its elements. */
  private depth = 0;
  private size = 0;
  private parts: string[] = [];

  constructor(private readonly max: number) {}

  readonly stage = (token: Token): Token | typeof none => {
    if (this.depth === 1 && BEGINS.has(token.name)) {
      this.elements++;
      this.size = 0;
      this.over = false;
    }
    switch (token.name) {
      case 'startObject':
      case 'startArray':
        this.depth++;
        this.grow(1);
        return token;
      case 'endObject':
      case 'endArray':
        this.depth--;
        if (this.depth === 0) this.ended = true;
        else this.grow(1);
        return token;
      case 'startString':
        this.parts = [];
        return none;
      case 'stringChunk':
        this.grow(token.value.length);
        if (!this.over) this.parts.push(token.value);
        return none;
      case 'endString': {
        // An element past the limit keeps its shape (streamArray counts its depth), not its text.
        const value = this.over ? '' : this.parts.join('');
        this.parts = [];
        this.grow(2);
        return { name: 'stringValue', value };
      }
      case 'keyValue':
      case 'numberValue':
        this.grow(token.value.length + 1);
        return token;
      default:
        this.grow(4);
        return token;
    }
  };

  private grow(chars: number): void {
    this.size += chars;
    if (this.size > this.max && !this.over) {
      this.over = true;
      this.dropped.push(this.elements - 1);
    }
  }
}
