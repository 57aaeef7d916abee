// What the notes module reads out of a Markdown body: #hashtags and [[wiki links]] outside
// code, the title of a note without one, the excerpt of listings. One linear scan finds the code
// (fenced blocks and code spans, as CommonMark delimits them); a full Markdown parse would cost
// more than a request may hold the event loop for a 100,000-character body, and is not needed.
import { isUuid } from '../../lib/validators';

/** A given tag: lower-case segments of `[a-z0-9_-]`, nested with `/`, 1–50 characters. */
export const TAG_PATTERN = /^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/;
export const MAX_TAG_LENGTH = 50;
export const MAX_TAGS = 50;
export const MAX_TITLE_LENGTH = 200;
export const EXCERPT_LENGTH = 300;
/** Wiki links kept per note (a body may repeat them; the rest are ignored). */
export const MAX_LINKS = 1000;

/** [start, end) ranges of the body that are code: fenced blocks (``` or ~~~) and `code spans`. */
export function codeRanges(body: string): [number, number][] {
  const ranges: [number, number][] = [];
  let fence: { char: string; length: number; start: number } | null = null;
  let lineStart = 0;
  let textStart = 0; // where the current run of non-fenced text began
  const spans = (from: number, to: number) => {
    // Code spans: a run of N backticks up to the next run of exactly N (CommonMark 6.1).
    let i = from;
    while (i < to) {
      if (body[i] !== '`') {
        i++;
        continue;
      }
      let n = 0;
      while (i + n < to && body[i + n] === '`') n++;
      let j = i + n;
      let closed = -1;
      while (j < to) {
        if (body[j] !== '`') {
          j++;
          continue;
        }
        let m = 0;
        while (j + m < to && body[j + m] === '`') m++;
        if (m === n) {
          closed = j + m;
          break;
        }
        j += m;
      }
      if (closed < 0) i += n;
      else {
        ranges.push([i, closed]);
        i = closed;
      }
    }
  };
  while (lineStart <= body.length) {
    let lineEnd = body.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = body.length;
    const line = body.slice(lineStart, lineEnd);
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (fence) {
      if (
        marker &&
        marker[1][0] === fence.char &&
        marker[1].length >= fence.length &&
        !line.slice(marker[0].length).trim()
      ) {
        ranges.push([fence.start, lineEnd]);
        fence = null;
        textStart = lineEnd + 1;
      }
    } else if (marker && !(marker[1][0] === '`' && line.slice(marker[0].length).includes('`'))) {
      spans(textStart, lineStart);
      fence = { char: marker[1][0], length: marker[1].length, start: lineStart };
    }
    lineStart = lineEnd + 1;
  }
  // An unclosed fence runs to the end of the body.
  if (fence) ranges.push([fence.start, body.length]);
  else spans(Math.min(textStart, body.length), body.length);
  return ranges.sort((a, b) => a[0] - b[0]);
}

/** Calls `visit` for each match of `pattern` (global) that starts outside code. */
function outsideCode(body: string, pattern: RegExp, visit: (m: RegExpExecArray) => void): void {
  const code = codeRanges(body);
  let r = 0;
  pattern.lastIndex = 0;
  for (let m = pattern.exec(body); m; m = pattern.exec(body)) {
    const at = m.index + (m[1]?.length ?? 0);
    while (r < code.length && code[r][1] <= at) r++;
    if (r < code.length && code[r][0] <= at) continue;
    visit(m);
  }
}

// `#` at the start of a line or after white space, then the tag's characters.
const HASHTAG = /(^|\s)#([A-Za-z0-9_/-]+)/g;

/** A hashtag as a tag: lower-cased, empty segments dropped; null when no tag remains or it is too long. */
export function hashtagToTag(raw: string): string | null {
  const tag = raw
    .toLowerCase()
    .split('/')
    .filter((s) => s)
    .join('/');
  return tag && tag.length <= MAX_TAG_LENGTH ? tag : null;
}

/** The tags of the body's #hashtags outside code, in order of appearance, without repeats. */
export function hashtags(body: string): string[] {
  const found = new Set<string>();
  outsideCode(body, HASHTAG, (m) => {
    const tag = hashtagToTag(m[2]);
    if (tag) found.add(tag);
  });
  return [...found];
}

/** Whether `tag` is `parent` or nested below it. */
export const isTagWithin = (tag: string, parent: string) => tag === parent || tag.startsWith(`${parent}/`);

/** `tag` renamed from `from` to `to` (nested tags keep their rest), or null when it is not within `from`. */
export function renamedTag(tag: string, from: string, to: string): string | null {
  return isTagWithin(tag, from) ? to + tag.slice(from.length) : null;
}

/** The body with every #hashtag within `from` (outside code) rewritten to `to`; the rest is untouched. */
export function renameHashtags(body: string, from: string, to: string): string {
  const edits: { at: number; length: number; text: string }[] = [];
  outsideCode(body, HASHTAG, (m) => {
    const tag = hashtagToTag(m[2]);
    const renamed = tag && renamedTag(tag, from, to);
    if (renamed) edits.push({ at: m.index + m[1].length, length: m[2].length + 1, text: `#${renamed}` });
  });
  let out = body;
  for (const e of edits.reverse()) out = out.slice(0, e.at) + e.text + out.slice(e.at + e.length);
  return out;
}

/** How titles are compared by wiki links: Unicode NFC, white space collapsed, lower-cased. */
export function titleKey(title: string): string {
  return title.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** The link key of a title (`t:<key>`) or an id (`i:<id>`): what note_links stores and backlinks look up. */
export const titleLinkKey = (title: string) => `t:${titleKey(title)}`;
export const idLinkKey = (id: string) => `i:${id.toLowerCase()}`;

// [[target]] or [[target|shown text]] on one line.
const WIKI_LINK = /()\[\[([^\]\n]{1,400})\]\]/g;

/** The link keys of the body's [[wiki links]] outside code, without repeats. */
export function wikiLinks(body: string): string[] {
  const found = new Set<string>();
  outsideCode(body, WIKI_LINK, (m) => {
    if (found.size >= MAX_LINKS) return;
    const target = m[2].split('|')[0].trim();
    if (isUuid(target)) found.add(idLinkKey(target));
    else if (target && [...target].length <= MAX_TITLE_LENGTH) found.add(titleLinkKey(target));
  });
  return [...found];
}

/** The first `max` code points of `text` (never half a surrogate pair). */
export const cut = (text: string, max: number) => {
  if (text.length <= max) return text;
  return [...text.slice(0, max * 2)].slice(0, max).join('');
};

/** The title of a note given none: the body's first non-blank line, without a heading's #s, cut to 200. */
export function titleFromBody(body: string): string {
  const line = body.split('\n', 50).find((l) => l.trim()) ?? '';
  return cut(
    line
      .trim()
      .replace(/^#{1,6}\s+/, '')
      .trim(),
    MAX_TITLE_LENGTH,
  );
}

/** What listings show instead of the body: its first 300 characters. */
export const excerptOf = (body: string) => cut(body, EXCERPT_LENGTH);
