// A streaming reader of one JSON object's top-level arrays: it is written the text a piece at a
// time and hands over each element of the wanted arrays (`{"bookmarks": [ {…}, {…} ]}`) as its
// own JSON text, so that a file of hundreds of MiB is never held whole (JSON.parse takes one
// element at a time). It only tracks strings, nesting and the root's keys; an element's own
// JSON is checked by JSON.parse, and an unfinished document fails at end().

export class JsonShapeError extends Error {}

/** What is handed over per element: its JSON text, or null when it was longer than the limit. */
export type ElementHandler = (key: string, json: string | null) => void;

export class JsonMemberArrays {
  private depth = 0;
  private started = false;
  private inString = false;
  private escaped = false;
  /** At the root: a key comes next (after `{` or `,`), else a value. */
  private expectKey = false;
  private key = '';
  private keyParts: string[] | null = null;
  private keyFrom = 0;
  /** The wanted array being read (its key), or null. */
  private array: string | null = null;
  private element: string[] | null = null;
  private elementLength = 0;
  private elementFrom = 0;
  private tooLong = false;
  /** The keys of the root's members whose values were arrays. */
  readonly arrays = new Set<string>();

  constructor(
    private readonly wanted: ReadonlySet<string>,
    private readonly onElement: ElementHandler,
    private readonly maxElementChars: number,
  ) {}

  write(text: string): void {
    const s = text;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) {
          this.inString = false;
          if (this.keyParts) {
            this.keyParts.push(s.slice(this.keyFrom, i));
            this.key = this.decodeKey(this.keyParts.join(''));
            this.keyParts = null;
          }
        }
        continue;
      }
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      if (!this.started) {
        if (c === 0xfeff) continue;
        if (c !== 0x7b) throw new JsonShapeError('not a JSON object');
        this.started = true;
        this.depth = 1;
        this.expectKey = true;
        continue;
      }
      if (this.depth === 0) throw new JsonShapeError('there is more after the JSON object');
      const inArray = this.array !== null && this.depth === 2;
      if (inArray && !this.element && c !== 0x5d && c !== 0x2c) this.startElement(i);
      switch (c) {
        case 0x22: // "
          this.inString = true;
          if (this.depth === 1 && this.expectKey) {
            this.keyParts = [];
            this.keyFrom = i + 1;
          }
          break;
        case 0x7b: // {
        case 0x5b: // [
          if (this.depth === 1 && c === 0x5b) {
            this.arrays.add(this.key);
            if (this.wanted.has(this.key)) this.array = this.key;
          }
          this.depth++;
          break;
        case 0x7d: // }
        case 0x5d: // ]
          if (inArray && c === 0x5d) {
            this.endElement(s, i);
            this.array = null;
          }
          this.depth--;
          if (this.depth < 0) throw new JsonShapeError('a bracket closes nothing');
          break;
        case 0x2c: // ,
          if (this.depth === 1) this.expectKey = true;
          else if (inArray) this.endElement(s, i);
          break;
        case 0x3a: // :
          if (this.depth === 1) this.expectKey = false;
          break;
      }
    }
    // The piece ends: what the element or key holds so far is kept, from the next piece's start.
    if (this.keyParts) {
      this.keyParts.push(s.slice(this.keyFrom));
      this.keyFrom = 0;
    }
    if (this.element) {
      this.keep(s.slice(this.elementFrom));
      this.elementFrom = 0;
    }
  }

  end(): void {
    if (!this.started) throw new JsonShapeError('not a JSON object');
    if (this.depth !== 0 || this.inString) throw new JsonShapeError('the JSON ends before its end (a cut file?)');
  }

  private decodeKey(raw: string): string {
    try {
      return JSON.parse(`"${raw}"`) as string;
    } catch {
      throw new JsonShapeError('a key is not a JSON string');
    }
  }

  private startElement(at: number): void {
    this.element = [];
    this.elementLength = 0;
    this.elementFrom = at;
    this.tooLong = false;
  }

  private keep(piece: string): void {
    if (this.tooLong) return;
    this.elementLength += piece.length;
    if (this.elementLength > this.maxElementChars) {
      this.tooLong = true;
      this.element = [];
    } else this.element!.push(piece);
  }

  private endElement(s: string, at: number): void {
    if (!this.element) return;
    this.keep(s.slice(this.elementFrom, at));
    const json = this.tooLong ? null : this.element.join('');
    this.element = null;
    this.onElement(this.array!, json);
  }
}
