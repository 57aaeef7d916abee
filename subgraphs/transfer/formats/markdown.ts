// A Markdown vault as a zip (an Obsidian vault, Joplin's or Bear's Markdown export): each `.md`
// file is a note in the note folder of its directory, its YAML front matter read with the `yaml`
// package: `title`, `tags`, `pinned` and `archived` are kept (the notes module has them);
// `aliases`, `created` and `updated` are not (it has no such fields, and sets its own times).
// Every other file is a vault file, and links to it (`![](path)`, `[x](path)`, `![[name]]`,
// `[[name.ext]]`) are rewritten to the vault item once it exists. Hidden entries (`.obsidian/`,
// `.trash/`, `__MACOSX/`) and Joplin's notebook metadata (`_notebook.yml`) are passed over.
import crypto from 'node:crypto';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { isUuid } from '../../../lib/validators';

export interface NoteRecord {
  kind: 'note';
  path: string;
  folder: string[];
  title: string;
  body: string;
  tags: string[];
  /** The file's SHA-256 (hex): with its path, what makes the same note known again. */
  hash: string;
  pinned?: boolean;
  archived?: boolean;
  /** Its id in this service's export (front matter `id`): hub nodes and links naming it are pointed at the new one. */
  sourceId?: string;
}

export interface FileRecord {
  kind: 'file';
  path: string;
  name: string;
  /** The blob holding its bytes until it is imported. */
  blob: string;
  size: number;
}

/** A notes tag: lower-case segments of [a-z0-9_-], nested with `/` (the notes module's rule). */
export function noteTag(raw: unknown): string | null {
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  const tag = String(raw)
    .trim()
    .replace(/^#/, '')
    .toLowerCase()
    .replace(/[^a-z0-9_/-]+/g, '-')
    .replace(/\/+/g, '/')
    .replace(/^[-/]+|[-/]+$/g, '');
  return tag && tag.length <= 50 && /^[a-z0-9_-]+(\/[a-z0-9_-]+)*$/.test(tag) ? tag : null;
}

/** Paths of the zip that are not part of the vault. */
export const hiddenPath = (p: string) =>
  p.split('/').some((part) => part.startsWith('.') || part === '__MACOSX') ||
  ['Thumbs.db', '_notebook.yml'].includes(path.basename(p));

/** A front matter flag: YAML's true, or the `yes`/`true` strings of exporters that write every value as a string. */
const flag = (value: unknown): boolean | undefined =>
  typeof value === 'boolean' ? value : typeof value === 'string' ? /^(true|yes)$/i.test(value.trim()) : undefined;

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/;

/**
 * A note from a `.md` file's text: front matter read, the body as written after it. `exact`
 * (this service's export) keeps the body to the byte; otherwise the one blank line exporters put
 * after the front matter (Joplin's `---\n\n`) is the separator, not the body's.
 */
export function noteFromMarkdown(
  filePath: string,
  text: string,
  exact = false,
): { record: NoteRecord; warning?: string } {
  let body = text.replace(/^\uFEFF/, '');
  let meta: Record<string, unknown> = {};
  let warning: string | undefined;
  const m = FRONT_MATTER.exec(body);
  if (m) {
    try {
      const parsed: unknown = parseYaml(m[1], { maxAliasCount: 10, prettyErrors: false });
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) meta = parsed as Record<string, unknown>;
      body = body.slice(m[0].length);
      if (!exact) body = body.replace(/^\r?\n/, '');
    } catch (err) {
      warning = `its front matter is not YAML (${(err as Error).message.split('\n')[0]}); kept in the body`;
    }
  }
  const parts = filePath.split('/');
  const base = parts[parts.length - 1].replace(/\.md$/i, '');
  const title = typeof meta.title === 'string' && meta.title.trim() ? meta.title.trim() : base;
  const rawTags = Array.isArray(meta.tags) ? meta.tags : typeof meta.tags === 'string' ? meta.tags.split(/[,\s]+/) : [];
  const tags = [...new Set(rawTags.map(noteTag).filter((t): t is string => t !== null))].slice(0, 50);
  return {
    record: {
      kind: 'note',
      path: filePath,
      folder: parts.slice(0, -1),
      title: [...title].slice(0, 200).join(''),
      body,
      tags,
      hash: crypto.createHash('sha256').update(text).digest('hex'),
      ...(flag(meta.pinned) ? { pinned: true } : {}),
      ...(flag(meta.archived) ? { archived: true } : {}),
      ...(exact && typeof meta.id === 'string' && isUuid(meta.id) ? { sourceId: meta.id } : {}),
    },
    warning,
  };
}

/**
 * The body with its links to imported files pointing at their vault items: Markdown links and
 * images whose target is the file (relative to the note, or to the vault's root), and wiki embeds
 * or links naming a file (by path or by name, as Obsidian resolves them).
 */
export function rewriteLinks(
  body: string,
  notePath: string,
  files: Map<string, string>,
  byName: Map<string, string>,
): string {
  const dir = path.posix.dirname(notePath);
  const find = (target: string): string | undefined => {
    let t: string;
    try {
      t = decodeURIComponent(target.trim().replace(/^<|>$/g, ''));
    } catch {
      t = target.trim();
    }
    if (/^[a-z][a-z0-9+.-]*:/i.test(t)) return undefined;
    t = t.split('#')[0];
    const rel = path.posix.normalize(path.posix.join(dir === '.' ? '' : dir, t));
    return files.get(rel) ?? files.get(path.posix.normalize(t)) ?? byName.get(path.posix.basename(t));
  };
  const url = (id: string) => `/api/v1/vault/items/${id}/content`;
  return body
    .replace(/(!?\[[^\]\n]*\]\()([^)\s]+)((?:\s+"[^"\n]*")?\))/g, (all, head: string, target: string, tail: string) => {
      const id = find(target);
      return id ? `${head}${url(id)}${tail}` : all;
    })
    .replace(
      /(!?)\[\[([^\]|#\n]+)(?:#[^\]|\n]*)?(?:\|([^\]\n]*))?\]\]/g,
      (all, bang: string, target: string, alias?: string) => {
        if (/\.md$/i.test(target) || !/\.[A-Za-z0-9]{1,8}$/.test(target.trim())) return all; // a note: kept as written
        const id = find(target);
        return id ? `${bang}[${alias ?? path.posix.basename(target.trim())}](${url(id)})` : all;
      },
    );
}
