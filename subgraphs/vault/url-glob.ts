// Vault rules' `url_matches` globs, compiled to a Thompson NFA and run as a set of states: a
// match reads each character of the URL once and keeps at most one copy of each state, so its
// cost is at most (URL length + 1) × (states), never exponential. picomatch compiles globs to
// backtracking regular expressions: `**/*a*a*a*a*a*a*a*a*b` against a URL of 48 a's ran for
// seconds on the event loop (issue 41, finding 1). A lazily built DFA (sets of NFA states,
// remembered with their transitions, at most DFA_STATES of them) makes the usual match one
// lookup per character. The syntax and what is refused are in docs/vault.md.

/** Thrown for a glob this matcher refuses; the message names the problem for the API's 400. */
export class GlobSyntaxError extends Error {}

/** A predicate over one UTF-16 code unit (as picomatch's regular expressions read a string). */
type CharTest = (code: number) => boolean;

// NFA states: a character test with one successor, a split (ε to two), or the accepting state.
const CHAR = 0;
const SPLIT = 1;
const MATCH = 2;

interface State {
  kind: number;
  test: CharTest | null;
  out: number;
  out2: number;
}

/** A fragment under construction: its start state and the dangling exits to patch. */
interface Fragment {
  start: number;
  exits: { state: number; second: boolean }[];
}

const SLASH = 0x2f;
const DFA_STATES = 2_000;
const GLOB_STATES = 4_000;

const lower = (code: number) => String.fromCharCode(code).toLowerCase().charCodeAt(0);
const upper = (code: number) => String.fromCharCode(code).toUpperCase().charCodeAt(0);

const POSIX: Record<string, (code: number) => boolean> = {
  alnum: (c) => /[A-Za-z0-9]/.test(String.fromCharCode(c)),
  alpha: (c) => /[A-Za-z]/.test(String.fromCharCode(c)),
  ascii: (c) => c <= 0x7f,
  blank: (c) => c === 0x20 || c === 0x09,
  cntrl: (c) => c < 0x20 || c === 0x7f,
  digit: (c) => c >= 0x30 && c <= 0x39,
  graph: (c) => c > 0x20 && c < 0x7f,
  lower: (c) => c >= 0x61 && c <= 0x7a,
  print: (c) => c >= 0x20 && c < 0x7f,
  punct: (c) => /[!-/:-@[-`{-~]/.test(String.fromCharCode(c)),
  space: (c) => /\s/.test(String.fromCharCode(c)),
  upper: (c) => c >= 0x41 && c <= 0x5a,
  word: (c) => /\w/.test(String.fromCharCode(c)),
  xdigit: (c) => /[0-9A-Fa-f]/.test(String.fromCharCode(c)),
};
const POSIX_NAMES = new Map(Object.entries(POSIX));

// ---- parsing ----------------------------------------------------------------------------------

type Node =
  | { type: 'char'; test: CharTest }
  | { type: 'star'; nonEmpty: boolean } // any run of characters but '/'
  | { type: 'any' } // any run of characters, '/' included (a globstar's body)
  | { type: 'seq'; items: Node[] }
  | { type: 'alt'; options: Node[] }
  | { type: 'optional'; item: Node };

class Parser {
  private pos = 0;
  constructor(private readonly text: string) {}

  parse(): Node {
    const node = this.sequence(false);
    if (this.pos < this.text.length) throw new GlobSyntaxError(`unexpected '${this.text[this.pos]}'`);
    // As picomatch: a glob that ends in '*' or a class also takes a trailing '/' (`…/docs/*`
    // matches `…/docs/page/`).
    const last = node.type === 'seq' ? node.items[node.items.length - 1] : node;
    if (last?.type === 'star' || (last?.type === 'char' && this.text.endsWith(']')))
      return { type: 'seq', items: [node, { type: 'optional', item: literal(SLASH) }] };
    return node;
  }

  /** A run of items up to the end, or inside braces up to ',' or '}'. */
  private sequence(inBraces: boolean): Node {
    const items: Node[] = [];
    const startPos = this.pos;
    while (this.pos < this.text.length) {
      const ch = this.text[this.pos];
      if (inBraces && (ch === ',' || ch === '}')) break;
      if (ch === '(' || ch === ')')
        throw new GlobSyntaxError(
          'parentheses and extglobs such as @(a|b) are not supported; write \\( and \\) to match them, or {a,b} for alternatives',
        );
      if (ch === '\\') {
        if (this.pos + 1 >= this.text.length) throw new GlobSyntaxError('a \\ at the end escapes nothing');
        items.push(literal(this.text.charCodeAt(this.pos + 1)));
        this.pos += 2;
      } else if (ch === '*') {
        let end = this.pos;
        while (this.text[end] === '*') end++;
        const segmentStart = this.pos === startPos ? this.boundaryBefore(inBraces) : this.text[this.pos - 1] === '/';
        const segmentEnd =
          end >= this.text.length ||
          this.text[end] === '/' ||
          (inBraces && (this.text[end] === ',' || this.text[end] === '}'));
        if (end - this.pos >= 2 && segmentStart && segmentEnd) items.push({ type: 'any' });
        // A '*' that is a whole segment at the end needs a character (`a/*` does not match `a/`).
        else items.push({ type: 'star', nonEmpty: !inBraces && segmentStart && end >= this.text.length });
        this.pos = end;
      } else if (ch === '?') {
        items.push({ type: 'char', test: (c) => c !== SLASH });
        this.pos++;
      } else if (ch === '[') {
        const cls = this.charClass();
        if (cls) items.push(cls);
        else {
          items.push(literal(0x5b));
          this.pos++;
        }
      } else if (ch === '{') {
        items.push(this.braces());
      } else {
        items.push(literal(this.text.charCodeAt(this.pos)));
        this.pos++;
      }
    }
    return globstars(items);
  }

  /** Whether the position before a brace alternative's start is a segment boundary. */
  private boundaryBefore(inBraces: boolean): boolean {
    if (!inBraces) return this.pos === 0 || this.text[this.pos - 1] === '/';
    // Inside braces: after '{' or ',', look at what precedes the brace group.
    let depth = 0;
    for (let i = this.pos - 1; i >= 0; i--) {
      const ch = this.text[i];
      if (ch === '}') depth++;
      else if (ch === '{') {
        if (depth === 0) return i === 0 || this.text[i - 1] === '/';
        depth--;
      }
    }
    return true;
  }

  /** `{a,b,…}`: alternatives; `{a}` without a comma is literal text, as picomatch reads it. */
  private braces(): Node {
    const open = this.pos;
    this.pos++;
    const options: Node[] = [this.sequence(true)];
    let commas = 0;
    while (this.text[this.pos] === ',') {
      this.pos++;
      commas++;
      options.push(this.sequence(true));
    }
    if (this.text[this.pos] !== '}') throw new GlobSyntaxError("a '{' without its '}'");
    this.pos++;
    const body = this.text.slice(open + 1, this.pos - 1);
    if (!commas) {
      if (/^[^{}]*\.\.[^{}]*$/.test(body))
        throw new GlobSyntaxError('brace ranges such as {1..9} are not supported; list the alternatives: {1,2,3}');
      return { type: 'seq', items: [literal(0x7b), options[0], literal(0x7d)] };
    }
    return { type: 'alt', options };
  }

  /** `[…]` at this.pos, or null when it is not a closed class (then '[' is literal). */
  private charClass(): Node | null {
    let i = this.pos + 1;
    let negate = false;
    if (this.text[i] === '!' || this.text[i] === '^') {
      negate = true;
      i++;
    }
    const tests: CharTest[] = [];
    let first = true;
    while (i < this.text.length) {
      const ch = this.text[i];
      if (ch === ']' && !first) break;
      first = false;
      if (ch === '[' && this.text[i + 1] === ':') {
        const close = this.text.indexOf(':]', i + 2);
        const name = close > 0 ? this.text.slice(i + 2, close) : '';
        const test = POSIX_NAMES.get(name);
        if (!test) throw new GlobSyntaxError(`unknown character class [:${name}:]`);
        tests.push(test);
        i = close + 2;
        continue;
      }
      if (ch === '\\' && i + 1 < this.text.length) i++;
      let from = this.text.charCodeAt(i);
      i++;
      if (this.text[i] === '-' && i + 1 < this.text.length && this.text[i + 1] !== ']') {
        i++;
        if (this.text[i] === '\\' && i + 1 < this.text.length) i++;
        let to = this.text.charCodeAt(i);
        i++;
        if (to < from) [from, to] = [to, from];
        const [lo, hi] = [from, to];
        tests.push((c) => c >= lo && c <= hi);
      } else {
        const code = from;
        tests.push((c) => c === code);
      }
    }
    if (i >= this.text.length) return null;
    this.pos = i + 1;
    const member = (c: number) => tests.some((t) => t(c));
    // Case-insensitive, as picomatch's `nocase`; a negated class never takes '/' (a segment's character).
    const caseless = (c: number) => member(c) || member(lower(c)) || member(upper(c));
    return { type: 'char', test: negate ? (c) => c !== SLASH && !caseless(c) : caseless };
  }
}

function literal(code: number): Node {
  const a = lower(code);
  const b = upper(code);
  return { type: 'char', test: (c) => c === code || c === a || c === b || lower(c) === a };
}

// picomatch's globstar forms, on a sequence: '**' alone matches anything; '**' + '/' at the
// start, zero or more leading segments; '/' + '**' at the end, nothing or '/' and anything;
// '/' + '**' + '/' in the middle, '/' or '/…/'.
function globstars(items: Node[]): Node {
  const out: Node[] = [];
  const isSlash = (n: Node | undefined) => n?.type === 'char' && n.test(SLASH) && !n.test(0x61);
  for (let i = 0; i < items.length; i++) {
    const node = items[i];
    if (node.type !== 'any') {
      out.push(node);
      continue;
    }
    const before = out.length > 0 && isSlash(out[out.length - 1]);
    const after = isSlash(items[i + 1]);
    if (before && after) {
      // '/**/' → '/' ( any '/' )?
      out.push({ type: 'optional', item: { type: 'seq', items: [node, items[i + 1]] } });
      i++;
    } else if (before) {
      // '/**' at the end → ( '/' any )?
      const slash = out.pop()!;
      out.push({ type: 'optional', item: { type: 'seq', items: [slash, node] } });
    } else if (after) {
      // '**/' at the start → ( any '/' )?
      out.push({ type: 'optional', item: { type: 'seq', items: [node, items[i + 1]] } });
      i++;
    } else out.push(node);
  }
  return out.length === 1 ? out[0] : { type: 'seq', items: out };
}

// ---- the automaton ----------------------------------------------------------------------------

class Builder {
  readonly states: State[] = [];

  add(kind: number, test: CharTest | null = null): number {
    if (this.states.length >= GLOB_STATES) throw new GlobSyntaxError('the glob is too complex');
    this.states.push({ kind, test, out: -1, out2: -1 });
    return this.states.length - 1;
  }

  patch(exits: Fragment['exits'], to: number) {
    for (const exit of exits) {
      if (exit.second) this.states[exit.state].out2 = to;
      else this.states[exit.state].out = to;
    }
  }

  /** ε: a split whose both ways lead on (a fragment that matches the empty string). */
  empty(): Fragment {
    const s = this.add(SPLIT);
    return {
      start: s,
      exits: [
        { state: s, second: false },
        { state: s, second: true },
      ],
    };
  }

  build(node: Node): Fragment {
    switch (node.type) {
      case 'char': {
        const s = this.add(CHAR, node.test);
        return { start: s, exits: [{ state: s, second: false }] };
      }
      case 'star':
      case 'any': {
        const test: CharTest = node.type === 'any' ? () => true : (c) => c !== SLASH;
        // loop: split → (char → loop) | exit; one or more: char → loop.
        const loop = this.add(SPLIT);
        const step = this.add(CHAR, test);
        this.states[step].out = loop;
        this.states[loop].out = step;
        if (node.type === 'star' && node.nonEmpty) {
          const first = this.add(CHAR, test);
          this.states[first].out = loop;
          return { start: first, exits: [{ state: loop, second: true }] };
        }
        return { start: loop, exits: [{ state: loop, second: true }] };
      }
      case 'seq': {
        if (!node.items.length) return this.empty();
        const first = this.build(node.items[0]);
        let exits = first.exits;
        for (const item of node.items.slice(1)) {
          const next = this.build(item);
          this.patch(exits, next.start);
          exits = next.exits;
        }
        return { start: first.start, exits };
      }
      case 'alt': {
        let fragment = this.build(node.options[0]);
        for (const option of node.options.slice(1)) {
          const other = this.build(option);
          const s = this.add(SPLIT);
          this.states[s].out = fragment.start;
          this.states[s].out2 = other.start;
          fragment = { start: s, exits: [...fragment.exits, ...other.exits] };
        }
        return fragment;
      }
      case 'optional': {
        const inner = this.build(node.item);
        const s = this.add(SPLIT);
        this.states[s].out = inner.start;
        return { start: s, exits: [...inner.exits, { state: s, second: true }] };
      }
    }
  }
}

/** A set of NFA states reached, with its transitions on characters as they are met. */
interface DfaState {
  states: Int32Array;
  accepting: boolean;
  next: Map<number, DfaState>;
}

export interface MatchCounter {
  /** NFA states visited (ε-closures and character tests) while matching. */
  steps: number;
}

export interface CompiledGlob {
  readonly source: string;
  /** NFA states: a match costs at most (input length + 1) × this many steps. */
  readonly size: number;
  match(input: string, counter?: MatchCounter): boolean;
}

class GlobAutomaton implements CompiledGlob {
  private readonly states: State[];
  private readonly start: number;
  private dfa = new Map<string, DfaState>();
  private readonly initial: { value: DfaState | null } = { value: null };
  private readonly mark: Int32Array;
  private generation = 0;

  constructor(
    readonly source: string,
    node: Node,
    private readonly negated: boolean,
  ) {
    const builder = new Builder();
    const fragment = builder.build(node);
    const match = builder.add(MATCH);
    builder.patch(fragment.exits, match);
    this.states = builder.states;
    this.start = fragment.start;
    this.mark = new Int32Array(this.states.length);
  }

  get size(): number {
    return this.states.length;
  }

  /** The ε-closure of `seeds`, as a DFA state (made once per distinct set). */
  private closure(seeds: number[], counter?: MatchCounter): DfaState {
    const generation = ++this.generation;
    const stack = seeds.slice();
    const reached: number[] = [];
    let accepting = false;
    while (stack.length) {
      const s = stack.pop()!;
      if (s < 0 || this.mark[s] === generation) continue;
      this.mark[s] = generation;
      if (counter) counter.steps++;
      const state = this.states[s];
      if (state.kind === SPLIT) stack.push(state.out2, state.out);
      else {
        if (state.kind === MATCH) accepting = true;
        reached.push(s);
      }
    }
    reached.sort((a, b) => a - b);
    const key = reached.join(',');
    let dfaState = this.dfa.get(key);
    if (!dfaState) {
      // Past the bound, forget what was learnt (RE2 does the same): memory stays bounded and
      // each character still costs at most one pass over the NFA's states.
      if (this.dfa.size >= DFA_STATES) {
        this.dfa = new Map();
        this.initial.value = null;
      }
      dfaState = { states: Int32Array.from(reached), accepting, next: new Map() };
      this.dfa.set(key, dfaState);
    }
    return dfaState;
  }

  match(input: string, counter?: MatchCounter): boolean {
    let current = this.initial.value ?? (this.initial.value = this.closure([this.start], counter));
    for (let i = 0; i < input.length && current.states.length; i++) {
      const code = input.charCodeAt(i);
      let next = current.next.get(code);
      if (counter) counter.steps++;
      if (!next) {
        const seeds: number[] = [];
        for (const s of current.states) {
          if (counter) counter.steps++;
          const state = this.states[s];
          if (state.kind === CHAR && state.test!(code)) seeds.push(state.out);
        }
        next = this.closure(seeds, counter);
        if (current.next.size < 256) current.next.set(code, next);
      }
      current = next;
    }
    return current.accepting !== this.negated;
  }
}

/**
 * Compiles a glob (throws GlobSyntaxError for what is refused). A leading '!' negates it, as in
 * picomatch; matching is case-insensitive and over the whole input.
 */
export function compileGlob(glob: string): CompiledGlob {
  let negated = false;
  let body = glob;
  while (body.startsWith('!') && body[1] !== '(') {
    negated = !negated;
    body = body.slice(1);
  }
  if (!body) throw new GlobSyntaxError('the glob is empty');
  // `**/**` is one globstar, as in picomatch.
  body = body.replace(/(^|\/)\*\*(?:\/\*\*)+(?=\/|$)/g, '$1**');
  return new GlobAutomaton(glob, new Parser(body).parse(), negated);
}

/** Why a glob is refused, or null when it compiles. */
export function globProblem(glob: string): string | null {
  try {
    compileGlob(glob);
    return null;
  } catch (err) {
    if (err instanceof GlobSyntaxError) return err.message;
    throw err;
  }
}
