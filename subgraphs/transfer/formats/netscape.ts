// The Netscape bookmark file (NETSCAPE-Bookmark-file-1): what Firefox, Chrome, Safari, Edge,
// Karakeep, Raindrop.io, Linkwarden and Pocket export. There is no formal grammar; the de-facto
// description is Microsoft's "Netscape Bookmark File Format"
// (https://learn.microsoft.com/en-us/previous-versions/windows/internet-explorer/ie-developer/platform-apis/aa753582(v=vs.85)):
//   <!DOCTYPE NETSCAPE-Bookmark-file-1> … <DL><p>
//     <DT><H3 ADD_DATE="…">Folder</H3>
//     <DL><p> <DT><A HREF="…" ADD_DATE="…" TAGS="a,b">Title</A> <DD>description … </DL><p>
//   </DL><p>
// Read with htmlparser2's streaming tokenizer (the parser linkedom is built on; it takes the
// file a piece at a time, never the whole document in memory, and tolerates the unclosed <DT>
// and <p> every exporter writes). Each link becomes a record; its folder path and TAGS become tags.

import { Parser } from 'htmlparser2';

export interface BookmarkRecord {
  url: string;
  title: string;
  tags: string[];
  /** ADD_DATE, as ISO 8601, when the file has one. */
  addedAt?: string;
  /** Where it is in the file, for error messages: its folder path and title. */
  path: string;
}

/** The longest URL and title a record keeps (longer URLs are skipped by the vault's own checks). */
const MAX_URL = 8192;
const MAX_TITLE = 1000;
const MAX_TAG = 50;
const MAX_TAGS = 50;

/**
 * A folder name or a TAGS entry as a tag: one word (the vault's tags have no spaces or commas),
 * lower case, at most 50 characters; empty: none.
 */
export const tagOf = (name: string): string =>
  [
    ...name
      .trim()
      .toLowerCase()
      .replace(/[\s,]+/gu, '-'),
  ]
    .slice(0, MAX_TAG)
    .join('');
const MAX_FOLDER_DEPTH = 64;

export class NotNetscapeError extends Error {}

/** A streaming reader: write the file's bytes in pieces, end(), and each bookmark is handed to `onRecord`. */
export class NetscapeReader {
  private readonly parser: Parser;
  /** The open folders' names; null for a browser's root folder (toolbar, other bookmarks): no tag. */
  private readonly folders: (string | null)[] = [];
  /** Per open <DL>: whether it opened a folder (pushed a name). */
  private readonly lists: boolean[] = [];
  private pendingFolder: string | null | undefined = undefined;
  private heading: string | null = null;
  private headingIsRoot = false;
  private link: { url: string; tags: string[]; addedAt?: string; title: string } | null = null;
  private sawDoctype = false;
  private head = '';
  private checked = false;
  private readonly decoder = new TextDecoder('utf-8');

  constructor(private readonly onRecord: (record: BookmarkRecord) => void) {
    this.parser = new Parser(
      {
        onprocessinginstruction: (name, data) => {
          if (name.toLowerCase() === '!doctype' && /netscape-bookmark-file-1/i.test(data)) this.sawDoctype = true;
        },
        onopentag: (name, attrs) => this.open(name, attrs),
        ontext: (text) => {
          if (this.link) this.link.title += text;
          else if (this.heading !== null) this.heading += text;
        },
        onclosetag: (name) => this.close(name),
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  write(bytes: Uint8Array): void {
    const text = this.decoder.decode(bytes, { stream: true });
    if (!this.checked) {
      this.head += text;
      if (this.head.length < 1024 && text.length) return;
      this.checkHead();
      this.parser.write(this.head);
      this.head = '';
      return;
    }
    this.parser.write(text);
  }

  end(): void {
    const rest = this.decoder.decode();
    if (!this.checked) {
      this.head += rest;
      this.checkHead();
      this.parser.write(this.head);
    } else if (rest) this.parser.write(rest);
    this.parser.end();
    if (!this.sawDoctype)
      throw new NotNetscapeError('not a Netscape bookmark file: no <!DOCTYPE NETSCAPE-Bookmark-file-1>');
  }

  /** Every exporter starts with the doctype (after a BOM or a comment at most): refuse anything else early. */
  private checkHead(): void {
    this.checked = true;
    const start = this.head.replace(/^\uFEFF/, '').replace(/^\s*(<!--[\s\S]*?-->\s*)*/, '');
    if (!/^<!doctype\s+netscape-bookmark-file-1\s*>/i.test(start))
      throw new NotNetscapeError(
        'not a Netscape bookmark file: it must start with <!DOCTYPE NETSCAPE-Bookmark-file-1> (export bookmarks as HTML from the browser)',
      );
  }

  private open(name: string, attrs: Record<string, string>): void {
    if (name === 'h3') {
      this.heading = '';
      // Firefox's toolbar and unfiled roots, Chrome's bookmarks bar: where, not what.
      this.headingIsRoot = 'personal_toolbar_folder' in attrs || 'unfiled_bookmarks_folder' in attrs;
    } else if (name === 'dl') {
      const folder = this.pendingFolder;
      this.pendingFolder = undefined;
      const opens = folder !== undefined && this.folders.length < MAX_FOLDER_DEPTH;
      if (opens) this.folders.push(folder);
      this.lists.push(opens);
    } else if (name === 'a') {
      const href = (attrs.href ?? '').trim();
      const tags = (attrs.tags ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const date = Number(attrs.add_date);
      // Seconds since 1970 (Firefox writes seconds; some exporters microseconds).
      const seconds = date > 1e14 ? date / 1e6 : date > 1e11 ? date / 1e3 : date;
      const addedAt = Number.isFinite(seconds) && seconds > 0 ? new Date(seconds * 1000).toISOString() : undefined;
      this.link = { url: href, tags, addedAt, title: '' };
    }
  }

  private close(name: string): void {
    if (name === 'h3' && this.heading !== null) {
      const name = this.heading.replace(/\s+/g, ' ').trim();
      this.pendingFolder = this.headingIsRoot ? null : name;
      this.heading = null;
    } else if (name === 'dl') {
      if (this.lists.pop()) this.folders.pop();
    } else if (name === 'a' && this.link) {
      const { url, tags, addedAt } = this.link;
      const title = this.link.title.replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE);
      this.link = null;
      const named = this.folders.filter((f): f is string => f !== null);
      const all = [...named, ...tags].map(tagOf).filter(Boolean);
      this.onRecord({
        url: url.slice(0, MAX_URL + 1),
        title,
        tags: [...new Set(all)].slice(0, MAX_TAGS),
        ...(addedAt ? { addedAt } : {}),
        path: [...named, title || url.slice(0, 200)].join(' / '),
      });
    }
  }
}
