// Parsing what enrichment fetched, in a thread of its own so that no page holds the event loop:
// HTML through linkedom (a DOM that runs no scripts) and Mozilla's Readability, files' media
// types from their bytes (file-type). Every call has a time limit: a thread that overruns it (a
// page with 100,000 nested elements, a pathological document) is terminated and replaced.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { TimedThread } from '../../lib/kit/timed-thread';

export interface PageFacts {
  title: string | null;
  description: string | null;
  siteName: string | null;
  language: string | null;
  text: string | null;
}

export interface FileFacts {
  /** Sniffed from the bytes; the claimed type only where the bytes cannot tell (plain text). */
  mediaType: string;
  /** The text of a text type (up to maxChars). */
  text: string | null;
}

export class ParseTimeout extends Error {
  readonly code = 'parse_timeout';
}
export class ParseFailed extends Error {
  readonly code = 'parse_failed';
}

/**
 * The thread's code: it runs outside any module loader of the caller (libraries are required and
 * imported natively by the paths handed over), so it must use nothing from this file.
 */
function parserThread() {
  const { parentPort, workerData } = require('node:worker_threads');
  const { parseHTML } = require(workerData.linkedom);
  const { Readability } = require(workerData.readability);
  // A native import(): TypeScript would turn the keyword into require(), which cannot load ES modules.
  const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<any>;
  let fileType: Promise<any> | undefined;

  const clean = (s: unknown, max: number): string | null => {
    if (typeof s !== 'string') return null;
    const t = s.replace(/\s+/g, ' ').trim();
    return t ? t.slice(0, max) : null;
  };
  /** Paragraphs kept as lines, runs of blanks as one space. */
  const prose = (s: string, max: number): string | null => {
    const t = s
      .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
      .replace(/ *\n[\s]*/g, '\n')
      .trim();
    return t ? t.slice(0, max) : null;
  };

  /** The encoding label: the header's, a BOM, a <meta> in the first 1024 bytes, else UTF-8. */
  function encodingOf(bytes: Uint8Array, headerCharset: string | null): string {
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
    if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
    if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
    const candidates = [headerCharset];
    const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
    const meta =
      /<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)/i.exec(head) ??
      /<meta[^>]+content\s*=\s*["'][^"']*charset\s*=\s*([\w.:-]+)/i.exec(head);
    candidates.push(meta?.[1] ?? null);
    for (const label of candidates) {
      if (!label) continue;
      try {
        new TextDecoder(label);
        // A page that claims UTF-16 in ASCII-compatible bytes is not UTF-16 (HTML's rule).
        return /^utf-?16/i.test(label) ? 'utf-8' : label;
      } catch {
        // unknown label: the next candidate
      }
    }
    return 'utf-8';
  }
  /** Undecodable bytes become U+FFFD: invalid UTF-8 or a wrong charset never fails a page. */
  const decode = (bytes: Uint8Array, label: string) => new TextDecoder(label, { fatal: false }).decode(bytes);

  const VOID = new Set('area base br col embed hr img input link meta param source track wbr'.split(' '));
  /** Deeper than this, no DOM is built: linkedom's parse time grows with the square of the depth. */
  const MAX_DEPTH = 2000;
  /** True when the tags nest deeper than MAX_DEPTH (a linear scan; stray closing tags are forgiven). */
  function tooDeep(source: string): boolean {
    let depth = 0;
    for (const m of source.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
      if (m[1]) depth = Math.max(0, depth - 1);
      else if (!m[3] && !VOID.has(m[2].toLowerCase()) && ++depth > MAX_DEPTH) return true;
    }
    return false;
  }
  const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
  const unescape = (t: string) => t.replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, e: string) => ENTITIES[e]);
  /** A page too deep for a DOM: its title and its text with the tags (and scripts, styles) removed. */
  function flat(source: string, maxChars: number) {
    const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(source)?.[1];
    const body = source
      .replace(/<(script|style|noscript|template|title)\b[\s\S]*?<\/\1\s*>/gi, ' ')
      .replace(/<[^>]*>/g, ' ');
    return {
      title: clean(title ? unescape(title) : null, 500),
      description: null,
      siteName: null,
      language: clean(/<html[^>]*\blang\s*=\s*["']?([\w-]+)/i.exec(source)?.[1], 35),
      text: prose(unescape(body), maxChars),
    };
  }

  function html(bytes: Uint8Array, charset: string | null, url: string, maxChars: number) {
    const source = decode(bytes, encodingOf(bytes, charset));
    if (tooDeep(source)) return flat(source, maxChars);
    let { document } = parseHTML(source);
    // A fragment (or nothing but blanks) has no root element: parsed again inside one.
    if (!document.documentElement) ({ document } = parseHTML(`<html><body>${source}</body></html>`));
    const meta = (...names: string[]) => {
      for (const name of names) {
        const el = document.querySelector(`meta[property="${name}"]`) ?? document.querySelector(`meta[name="${name}"]`);
        const value = clean(el?.getAttribute('content'), 1000);
        if (value) return value;
      }
      return null;
    };
    const title = clean(meta('og:title', 'twitter:title') ?? document.querySelector('title')?.textContent, 500);
    const description = clean(meta('og:description', 'description', 'twitter:description'), 1000);
    const siteName = clean(meta('og:site_name', 'application-name'), 200);
    const locale = meta('og:locale');
    const language = clean(
      document.documentElement?.getAttribute('lang') ??
        document.querySelector('meta[http-equiv="content-language" i]')?.getAttribute('content') ??
        (locale ? locale.replace('_', '-') : null),
      35,
    );
    let text: string | null;
    try {
      // Readability changes the document; the facts above were read first.
      const article = new Readability(document, { charThreshold: 200 }).parse();
      text = article?.textContent ? prose(article.textContent, maxChars) : null;
    } catch {
      text = null; // e.g. a document too deep for its recursion: the plain text below
    }
    if (!text) {
      for (const el of document.querySelectorAll('script, style, noscript, template, nav, footer, header, aside'))
        el.remove();
      text = prose(document.body?.textContent ?? '', maxChars);
    }
    void url;
    return { title, description, siteName, language, text };
  }

  const TEXTUAL = /^(text\/|application\/(json|xml|x-ndjson|javascript|x-yaml|yaml)|image\/svg\+xml)/;

  async function sniff(bytes: Uint8Array, claimed: string | null, maxChars: number) {
    fileType ??= importModule(workerData.fileType);
    const found = await (await fileType).fileTypeFromBuffer(bytes);
    if (found && !TEXTUAL.test(found.mime)) return { mediaType: found.mime, text: null };
    // No signature: text when it has no NUL and decodes as UTF-8 (or as what was claimed).
    const head = bytes.subarray(0, 64 * 1024);
    if (head.includes(0)) return { mediaType: 'application/octet-stream', text: null };
    let utf8 = true;
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(
        head.length < bytes.length ? head.subarray(0, head.length - 4) : head,
      );
    } catch {
      utf8 = false;
    }
    const claimedText = claimed && TEXTUAL.test(claimed) ? claimed : null;
    if (!utf8 && !claimedText) return { mediaType: 'application/octet-stream', text: null };
    const mediaType = found?.mime ?? claimedText ?? 'text/plain';
    const text =
      mediaType === 'text/html' || mediaType === 'application/xhtml+xml'
        ? html(bytes, null, '', maxChars).text
        : prose(decode(bytes, utf8 ? 'utf-8' : encodingOf(bytes, null)), maxChars);
    return { mediaType, text };
  }

  // Loaded: calls may be timed from now on (loading the libraries is not a page's time).
  parentPort.postMessage({ ready: true });
  parentPort.on('message', async (message: any) => {
    const { id, op } = message;
    try {
      const result =
        op === 'html'
          ? html(message.bytes, message.charset, message.url, message.maxChars)
          : await sniff(message.bytes, message.claimed, message.maxChars);
      parentPort.postMessage({ id, result });
    } catch (err) {
      parentPort.postMessage({ id, error: String((err as Error)?.message ?? err) });
    }
  });
}

/** An ES module package's entry file, found where require() would look (require.resolve cannot: it has no `require` export). */
function esmEntry(name: string): string {
  for (const dir of require.resolve.paths(name) ?? []) {
    const entry = path.join(dir, name, 'index.js');
    if (existsSync(entry)) return entry;
  }
  throw new Error(`${name} is not installed`);
}

/**
 * Up to `threads` parser threads (VAULT_PARSE_THREADS, lib/kit/timed-thread.ts), each started on
 * its first call: a call goes to the one with the fewest calls waiting, so two enrichments parse on
 * two cores rather than one after the other (one thread held enrichment to about one page a
 * second). A call that overruns its time fails alone; the calls queued behind it go to a new thread.
 */
export class PageParser {
  private readonly threads: TimedThread[];

  constructor(timeoutMs: number, threads = 1) {
    this.threads = Array.from({ length: Math.max(1, threads) }, () => this.newThread(timeoutMs));
  }

  private newThread(timeoutMs: number): TimedThread {
    return new TimedThread({
      source: `(${parserThread.toString()})()`,
      workerData: {
        linkedom: require.resolve('linkedom'),
        readability: require.resolve('@mozilla/readability'),
        fileType: pathToFileURL(esmEntry('file-type')).href,
      },
      // A hostile page cannot take the process's memory with it.
      resourceLimits: { maxOldGenerationSizeMb: 512, stackSizeMb: 8 },
      timeoutMs,
      announcesReady: true,
      queued: 'retry',
      overrun: (ms) => new ParseTimeout(`parsing took more than ${ms} ms`),
      failed: (message) => new ParseFailed(message),
      stopped: (reason) => new ParseFailed(`the parser thread stopped (${reason})`),
    });
  }

  private call<T>(message: Record<string, unknown>): Promise<T> {
    let least = this.threads[0];
    for (const t of this.threads) if (t.waiting < least.waiting) least = t;
    return least.call<T>(message);
  }

  // A copy is sent: the caller keeps its buffer (it may be a slice of a pooled one, which
  // postMessage would send whole).
  html(bytes: Uint8Array, charset: string | null, url: string, maxChars: number): Promise<PageFacts> {
    return this.call({ op: 'html', bytes: new Uint8Array(bytes), charset, url, maxChars });
  }

  sniff(bytes: Uint8Array, claimed: string | null, maxChars: number): Promise<FileFacts> {
    return this.call({ op: 'sniff', bytes: new Uint8Array(bytes), claimed, maxChars });
  }

  async stop(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.stop()));
  }
}
