// An import, on the kit's fair batched runner (lib/kit/jobs.ts): the first batch reads the
// uploaded file (a piece at a time, through the format's streaming reader) into records, one JSON
// object a line, in the blob store; every later batch applies at most IMPORT_BATCH_RECORDS of
// them and goes back to the queue, so another user's import waits at most one batch. Records are
// applied through the owning module's own GraphQL mutations, via the gateway, as the user (a token
// of their session narrowed to what imports need, signed for the batch), so that the module's caps,
// sizes, duplicate checks, enrichment queue and events apply as to any capture.
//
// - A duplicate (the vault's 409 with `existingId`) counts in `duplicates`: the same file twice creates nothing.
// - A record the module refuses (not an http link, too long) counts in `skipped` with an error.
// - A cap reached (409 with `details.limit`) ends the job `failed` with that error; what was imported stays.
// - The user's waiting-work limit (429) pauses the batch for its Retry-After, and the record is tried again.
// - A session that ended (401) fails the job: import the file again to go on (duplicates are skipped).
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { GraphQLFormattedError } from 'graphql';
import type { DataSource } from 'typeorm';
import type { BlobStore } from '../../lib/blob-store';
import type { Config } from '../../lib/config';
import { affectedRows } from '../../lib/database/portable';
import type { GatewayLink } from '../../lib/gateway-link';
import { JobHandler, JobLost } from '../../lib/kit/jobs';
import type { Logger } from '../../lib/logger';
import { recordEvent } from '../../lib/outbox';
import type { TokenSigner } from '../../lib/tokens';
import { TransferCounts, TransferError, TransferJob } from './entities/transfer-job';
import crypto from 'node:crypto';
import { isUniqueViolation } from '../../lib/database/portable';
import { ImportSource } from './entities/import-source';
import { In } from 'typeorm';
import { FileRecord, hiddenPath, NoteRecord, noteFromMarkdown, rewriteLinks } from './formats/markdown';
import { NotKarakeepError, readKarakeep } from './formats/karakeep';
import { BookmarkRecord, NetscapeReader, NotNetscapeError } from './formats/netscape';
import { readZip, ZipRefused } from './formats/zip';
import { ExportedItem, exportedFileName, ExportedMeta, metaOf } from './formats/export-items';
import { canvasRefs, pointHubRefs } from './hub-refs';
import { jobEventData } from './transfer-service';
import { attachmentKey, IMPORT_JOB_KIND, MAX_JOB_ERRORS, pieceKey, recordsKey } from './transfer-rules';

/** Scopes an import's token carries, of those the user has: what creating their data needs. */
const IMPORT_SCOPES = ['vault:read', 'vault:write', 'notes:read', 'notes:write', 'hubs:read', 'hubs:write'];
/** The life of a batch's token: a batch is far shorter. */
const TOKEN_TTL_SECONDS = 300;
/** Bytes of records read per batch: far more than IMPORT_BATCH_RECORDS lines of at most ~10 KiB. */
const RECORDS_WINDOW = 1024 * 1024;
/** The longest pause for the user's waiting-work limit within a batch. */
const MAX_PAUSE_MS = 5000;

/** A failure that ends the job with its message (as opposed to a passing fault, which the kit retries). */
export class ImportFailed extends Error {}

/** What every capture of an import may carry besides its content. */
const CAPTURE_VARS =
  '$title: String, $tags: [String!], $capturedAt: DateTimeISO, $favorite: Boolean, $category: String';
const CAPTURE_ARGS = 'title: $title, tags: $tags, capturedAt: $capturedAt, favorite: $favorite, category: $category';
const CAPTURE_LINK = `mutation ImportBookmark($url: String!, ${CAPTURE_VARS}) {
  captureVaultItem(url: $url, ${CAPTURE_ARGS}) { id version }
}`;
const CAPTURE_TEXT = `mutation ImportText($text: String!, ${CAPTURE_VARS}) {
  captureVaultItem(text: $text, ${CAPTURE_ARGS}) { id version }
}`;
const CAPTURE_FILE = `mutation ImportFile($file: VaultFileInput!, ${CAPTURE_VARS}) {
  captureVaultItem(file: $file, ${CAPTURE_ARGS}) { id version }
}`;
const ITEM_VERSION = 'query ImportItemVersion($id: ID!) { vaultItem(id: $id) { version archived } }';
const ARCHIVE_ITEM = `mutation ImportArchiveItem($id: ID!, $version: Int!) {
  updateVaultItem(id: $id, version: $version, archived: true) { id }
}`;
const CREATE_NOTE = `mutation ImportNote($title: String, $body: String!, $folderId: ID, $tags: [String!], $pinned: Boolean) {
  createNote(title: $title, body: $body, folderId: $folderId, tags: $tags, pinned: $pinned) { id version }
}`;
const ARCHIVE_NOTE =
  'mutation ImportArchiveNote($id: ID!, $version: Int!) { archiveNote(id: $id, version: $version) { id } }';
const FOLDERS = 'query ImportFolders { noteFolders { id path } }';
const IMPORT_HUB = `mutation ImportHub($name: String!, $canvas: JSONObject!) { importHub(name: $name, canvas: $canvas) { id } }`;
/** The largest canvas imported (the hubs module's own body limit is 8 MiB by default). */
const MAX_CANVAS_BYTES = 16 * 1024 * 1024;
/** The most of vault/items.json an export import reads. */
const MAX_ITEMS_JSON_BYTES = 256 * 1024 * 1024;
const CREATE_FOLDER = `mutation ImportFolder($name: String!, $parentId: ID) {
  createNoteFolder(name: $name, parentId: $parentId) { id path }
}`;
/** A `.md` file larger than this is not a note the notes module would take (100,000 characters). */
const MAX_NOTE_FILE_BYTES = 512 * 1024;

/** A part of the file passed over while reading it (too large, not readable): counted as skipped when applied. */
interface SkipRecord {
  kind: 'skip';
  path: string;
  message: string;
}
/** What a vault item of a file may carry besides its content (Karakeep's, this service's export). */
interface ItemMeta {
  archived?: boolean;
  favorite?: boolean;
  /** A category set by hand (an export's `classification.by: user`). */
  category?: string;
  /** Its id in this service's export: hub nodes and note links naming it are pointed at the new item. */
  sourceId?: string;
}
type LinkRecord = BookmarkRecord & ItemMeta & { kind?: 'link' };
/** A text for the vault (a Karakeep text bookmark, a text item of an export): known again by its text. */
interface TextRecord extends ItemMeta {
  kind: 'text';
  path: string;
  text: string;
  title: string;
  tags: string[];
  addedAt?: string;
  hash: string;
}
type ItemFileRecord = FileRecord & ItemMeta & { title?: string | null; tags?: string[]; addedAt?: string };
/** A hub of an export: its canvas, imported through the hubs module's importHub. */
interface HubRecord {
  kind: 'hub';
  path: string;
  name: string;
  canvas: Record<string, unknown>;
  hash: string;
}
type ImportRecord = LinkRecord | TextRecord | NoteRecord | ItemFileRecord | SkipRecord | HubRecord;

const sha256 = (text: string) => crypto.createHash('sha256').update(text).digest('hex');

export interface ImportRunnerDeps {
  dataSource: DataSource;
  store: BlobStore;
  gateway?: GatewayLink;
  signer: () => TokenSigner | null;
  config: Pick<
    Config,
    | 'IMPORT_BATCH_RECORDS'
    | 'IMPORT_MAX_RECORDS'
    | 'IMPORT_ZIP_MAX_ENTRIES'
    | 'IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES'
    | 'VAULT_MAX_FILE_BYTES'
  >;
  logger?: Logger;
}

/** What applying one record came to. */
type Outcome =
  | { created: 'vaultItems' | 'notes' | 'hubs'; folders?: number; problems?: string[] }
  | { duplicate: true }
  | { skipped: string }
  | { pause: number }
  | { fail: string };

type GqlError = GraphQLFormattedError & {
  extensions?: {
    code?: string;
    details?: { existingId?: string; limit?: string; max?: number; refId?: unknown };
    retryAfter?: number;
  };
};

export function importHandler(deps: ImportRunnerDeps): JobHandler<{ transferId: string }> {
  const { dataSource, store } = deps;

  async function fail(job: TransferJob, message: string, path = ''): Promise<void> {
    await dataSource.transaction(async (m) => {
      const errors = [...job.errors, { path, message }].slice(-MAX_JOB_ERRORS);
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({ state: 'failed', finishedAt: new Date(), errors })
        .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
        .execute();
      if (affectedRows(r) !== 1) return;
      const row = await m.findOneByOrFail(TransferJob, { id: job.id });
      await recordEvent(m, {
        type: 'import.finished',
        userId: job.ownerId,
        resourceId: job.id,
        data: { ...jobEventData(row), error: message },
      });
    });
    await removeBlobs(job);
  }

  async function removeBlobs(job: TransferJob): Promise<void> {
    for (let n = 0; n < job.pieces; n++) await store.delete(pieceKey(job.id, n));
    await store.delete(recordsKey(job.id));
    await store.delete(`${recordsKey(job.id)}.part`);
    for (const key of [notesKey(job.id), hubsKey(job.id)]) {
      await store.delete(`${key}.part`);
      await store.delete(key);
    }
    if (job.format === 'markdown' || job.format === 'export')
      for (let n = 0; n < job.total; n++) await store.delete(attachmentKey(job.id, n));
  }
  const notesKey = (id: string) => `import-${id}-notes.jsonl`;
  const hubsKey = (id: string) => `import-${id}-hubs.jsonl`;

  /** The uploaded file, read a piece at a time into records (one JSON line each). Answers how many. */
  async function readFile(job: TransferJob): Promise<number> {
    const writer = await store.begin(`${recordsKey(job.id)}.part`);
    let count = 0;
    let lines: string[] = [];
    const add = (record: ImportRecord) => {
      count++;
      if (count > deps.config.IMPORT_MAX_RECORDS)
        throw new ImportFailed(
          `The file holds more than ${deps.config.IMPORT_MAX_RECORDS} records (IMPORT_MAX_RECORDS).`,
        );
      lines.push(JSON.stringify(record));
    };
    const flush = async (to = writer) => {
      if (!lines.length) return;
      await to.append(Buffer.from(lines.join('\n') + '\n'));
      lines = [];
    };
    try {
      if (job.format === 'netscape') {
        const reader = new NetscapeReader(add);
        for (let n = 0; n < job.pieces; n++) {
          const size = await store.size(pieceKey(job.id, n));
          const bytes = size === null ? null : await store.read(pieceKey(job.id, n), 0, size);
          if (!bytes) throw new ImportFailed('The uploaded file is gone; import it again.');
          reader.write(bytes);
          await flush();
        }
        reader.end();
        await flush();
      } else if (job.format === 'markdown' || job.format === 'export') {
        await readMarkdownZip(job, writer, add, flush);
      } else if (job.format === 'canvas') {
        await readCanvases(job, add);
        await flush();
      } else if (job.format === 'karakeep') {
        await readKarakeep(
          () => textPieces(job),
          async (record) => {
            add(record);
            if (lines.length >= 1000) await flush();
          },
        );
        await flush();
      } else {
        throw new ImportFailed(`Imports of format "${job.format}" are not served yet.`);
      }
      await writer.commit(recordsKey(job.id));
    } catch (err) {
      await writer.abort();
      if (err instanceof NotNetscapeError || err instanceof NotKarakeepError || err instanceof ZipRefused)
        throw new ImportFailed(err.message);
      throw err;
    }
    // The pieces are no longer needed: the records are what later batches read.
    for (let n = 0; n < job.pieces; n++) await store.delete(pieceKey(job.id, n));
    return count;
  }

  /** The uploaded file's text, a piece at a time (UTF-8, a character cut between pieces kept whole). */
  async function* textPieces(job: TransferJob): AsyncIterable<string> {
    const decoder = new TextDecoder('utf-8');
    for (let n = 0; n < job.pieces; n++) {
      const size = await store.size(pieceKey(job.id, n));
      const bytes = size === null ? null : await store.read(pieceKey(job.id, n), 0, size);
      if (!bytes) throw new ImportFailed('The uploaded file is gone; import it again.');
      yield decoder.decode(bytes, { stream: true });
    }
    yield decoder.decode();
  }

  /** One `.canvas` file (JSON Canvas 1.0), or a zip of them: each a hub, named after its file. */
  async function readCanvases(job: TransferJob, add: (record: ImportRecord) => void): Promise<void> {
    const first = job.pieces ? await store.read(pieceKey(job.id, 0), 0, 4) : null;
    const keys = Array.from({ length: job.pieces }, (_, n) => pieceKey(job.id, n));
    const hub = (path: string, text: string) => {
      let canvas: unknown;
      try {
        canvas = JSON.parse(text.replace(/^\uFEFF/, ''));
      } catch (err) {
        throw new ImportFailed(`${path} is not a JSON Canvas document: ${(err as Error).message}`);
      }
      if (!canvas || typeof canvas !== 'object' || Array.isArray(canvas))
        throw new ImportFailed(`${path} is not a JSON Canvas document: not an object`);
      const name =
        path
          .split('/')
          .pop()!
          .replace(/\.canvas$/i, '')
          .slice(0, 100) || 'Canvas';
      add({ kind: 'hub', path, name, canvas: canvas as Record<string, unknown>, hash: sha256(text) });
    };
    if (first?.subarray(0, 2).toString('latin1') === 'PK') {
      await readZip(
        store,
        keys,
        {
          maxEntries: deps.config.IMPORT_ZIP_MAX_ENTRIES,
          maxUncompressedBytes: deps.config.IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES,
        },
        async (entry) => {
          if (hiddenPath(entry.path) || !/\.canvas$/i.test(entry.path)) return;
          const bytes = await entry.read(MAX_CANVAS_BYTES);
          if (!bytes) add({ kind: 'skip', path: entry.path, message: `larger than ${MAX_CANVAS_BYTES} bytes` });
          else hub(entry.path, bytes.toString('utf8'));
        },
      );
      return;
    }
    if (job.bytes > MAX_CANVAS_BYTES) throw new ImportFailed(`A canvas holds at most ${MAX_CANVAS_BYTES} bytes.`);
    const parts: Buffer[] = [];
    for (const key of keys) {
      const size = (await store.size(key)) ?? 0;
      const bytes = await store.read(key, 0, size);
      if (!bytes) throw new ImportFailed('The uploaded file is gone; import it again.');
      parts.push(bytes);
    }
    hub('Imported canvas.canvas', Buffer.concat(parts).toString('utf8'));
  }

  /**
   * Files first (so that notes can link to their vault items), then the notes, from a second blob,
   * then (an export's) hubs, from a third: a hub's nodes may point at any of them.
   */
  async function readMarkdownZip(
    job: TransferJob,
    writer: Awaited<ReturnType<BlobStore['begin']>>,
    add: (record: ImportRecord) => void,
    flush: (to?: Awaited<ReturnType<BlobStore['begin']>>) => Promise<void>,
  ): Promise<void> {
    const notes = await store.begin(`${notesKey(job.id)}.part`);
    const hubs = await store.begin(`${hubsKey(job.id)}.part`);
    let attachments = 0;
    let manifest = false;
    /** An export's file items' metadata (from items.json), by their old id, until their bytes come. */
    const fileMeta = new Map<string, ExportedMeta>();
    /**
     * This service's export: manifest.json must say format_version 1; notes/ are notes (the
     * prefix dropped, the body exact), vault/items.json's links and texts are captured again and
     * its files' metadata kept for vault/files/<id>-<name>; hubs/*.canvas are hubs; the rest
     * (bookmarks.html, voices.json) is passed over. True: handled.
     */
    const exportEntry = async (entry: { path: string; read(max: number): Promise<Buffer | null> }) => {
      const p = entry.path;
      if (p === 'manifest.json') {
        const text = (await entry.read(1024 * 1024))?.toString('utf8') ?? '';
        let version: unknown;
        try {
          version = (JSON.parse(text) as { format_version?: unknown }).format_version;
        } catch {
          version = undefined;
        }
        if (version !== 1)
          throw new ImportFailed('not an export of this service: manifest.json has no format_version 1');
        manifest = true;
        return true;
      }
      if (p.startsWith('notes/') && /\.md$/i.test(p)) {
        const bytes = await entry.read(MAX_NOTE_FILE_BYTES);
        if (!bytes) add({ kind: 'skip', path: p, message: `larger than ${MAX_NOTE_FILE_BYTES} bytes: not a note` });
        else add(noteFromMarkdown(p.slice('notes/'.length), bytes.toString('utf8'), true).record);
        await flush(notes);
        return true;
      }
      if (p === 'vault/items.json') {
        const bytes = await entry.read(MAX_ITEMS_JSON_BYTES);
        let items: ExportedItem[];
        try {
          items = bytes ? (JSON.parse(bytes.toString('utf8')) as ExportedItem[]) : [];
        } catch {
          throw new ImportFailed('vault/items.json is not JSON');
        }
        if (!Array.isArray(items)) throw new ImportFailed('vault/items.json is not a list');
        for (const item of items) {
          if (!item || typeof item !== 'object') continue;
          const { title, ...meta } = metaOf(item);
          if (item.kind === 'link' && typeof item.url === 'string')
            add({ ...meta, url: item.url, title: title ?? '', path: `vault/items.json: ${item.url.slice(0, 200)}` });
          else if (item.kind === 'text' && typeof item.text === 'string')
            add({
              ...meta,
              kind: 'text',
              text: item.text,
              title: title ?? '',
              path: `vault/items.json: ${(title || item.text).slice(0, 200)}`,
              hash: sha256(item.text),
            });
          else if (item.kind === 'file' && meta.sourceId) fileMeta.set(meta.sourceId, { title, ...meta });
          await flush(writer);
        }
        return true;
      }
      if (p.startsWith('hubs/') && p.endsWith('.canvas')) {
        const bytes = await entry.read(64 * 1024 * 1024);
        let canvas: unknown;
        try {
          canvas = bytes ? JSON.parse(bytes.toString('utf8')) : undefined;
        } catch {
          canvas = undefined;
        }
        if (!canvas || typeof canvas !== 'object' || Array.isArray(canvas))
          add({ kind: 'skip', path: p, message: 'not a JSON Canvas document' });
        else
          add({
            kind: 'hub',
            path: p,
            name: p.slice('hubs/'.length, -'.canvas'.length).slice(0, 100),
            canvas: canvas as Record<string, unknown>,
            hash: sha256(bytes!.toString('utf8')),
          });
        await flush(hubs);
        return true;
      }
      if (p.startsWith('vault/files/')) return false; // a file: below, named without its old id
      return true;
    };
    try {
      const keys = Array.from({ length: job.pieces }, (_, n) => pieceKey(job.id, n));
      await readZip(
        store,
        keys,
        {
          maxEntries: deps.config.IMPORT_ZIP_MAX_ENTRIES,
          maxUncompressedBytes: deps.config.IMPORT_ZIP_MAX_UNCOMPRESSED_BYTES,
        },
        async (entry) => {
          if (hiddenPath(entry.path)) return;
          if (job.format === 'export') {
            if (await exportEntry(entry)) return;
          }
          if (/\.md$/i.test(entry.path)) {
            const bytes = await entry.read(MAX_NOTE_FILE_BYTES);
            if (!bytes) {
              add({ kind: 'skip', path: entry.path, message: `larger than ${MAX_NOTE_FILE_BYTES} bytes: not a note` });
              return;
            }
            const { record, warning } = noteFromMarkdown(entry.path, bytes.toString('utf8'));
            if (warning) add({ kind: 'skip', path: entry.path, message: warning });
            add(record);
            await flush(notes);
            return;
          }
          const bytes = await entry.read(deps.config.VAULT_MAX_FILE_BYTES);
          if (!bytes) {
            add({
              kind: 'skip',
              path: entry.path,
              message: `larger than ${deps.config.VAULT_MAX_FILE_BYTES} bytes (VAULT_MAX_FILE_BYTES)`,
            });
            await flush(writer);
            return;
          }
          const blob = attachmentKey(job.id, attachments++);
          await store.put(blob, bytes);
          const base = entry.path.split('/').pop()!;
          // An export names its files <old item id>-<name>; items.json told the rest of them.
          const exported = job.format === 'export' ? exportedFileName(base) : { name: base };
          const meta = exported.id ? fileMeta.get(exported.id) : undefined;
          add({ ...meta, kind: 'file', path: entry.path, name: exported.name, blob, size: bytes.length });
          await flush(writer);
        },
      );
      await flush(writer);
      if (job.format === 'export' && !manifest)
        throw new ImportFailed('not an export of this service: the zip has no manifest.json');
      for (const [key, part] of [
        [notesKey(job.id), notes],
        [hubsKey(job.id), hubs],
      ] as const) {
        const size = await part.commit(key);
        for (let at = 0; at < size;) {
          const chunk = await store.read(key, at, 1024 * 1024);
          if (!chunk?.length) break;
          await writer.append(chunk);
          at += chunk.length;
        }
      }
    } finally {
      for (const [key, part] of [
        [notesKey(job.id), notes],
        [hubsKey(job.id), hubs],
      ] as const) {
        await part.abort().catch(() => undefined);
        await store.delete(key);
      }
    }
  }

  function tokenFor(job: TransferJob): string {
    const signer = deps.signer();
    if (!signer)
      throw new ImportFailed(
        'This server cannot act for you in the background (the transfer module has no signing key, JWT_PRIVATE_KEY).',
      );
    const p = job.principal;
    return signer.sign(
      {
        userId: p.userId,
        sessionId: p.sessionId,
        roles: p.roles,
        scopes: p.scopes.filter((s) => IMPORT_SCOPES.includes(s)),
      },
      'access',
      TOKEN_TTL_SECONDS,
    ).token;
  }

  async function call(
    token: string,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<{ data?: Record<string, unknown> | null; error?: GqlError }> {
    if (!deps.gateway?.bound) throw new ImportFailed('This server has no gateway to import through (GATEWAY_URL).');
    const result = await deps.gateway.execute({
      query,
      variables,
      headers: { authorization: `Bearer ${token}` },
      clientIp: '',
    });
    const error: GqlError | undefined = result.errors?.[0];
    return { data: result.data, error };
  }

  /** A refusal that is not the record's own fault, or null when it is (then it is skipped). */
  function refusal(error: GqlError): Outcome | null {
    const ext = error.extensions ?? {};
    if (ext.code === 'conflict' && ext.details?.existingId) return { duplicate: true };
    if (ext.code === 'conflict' && ext.details?.limit)
      return {
        fail: `${error.message} (${ext.details.limit}: at most ${ext.details.max ?? '?'}); what was imported before stays.`,
      };
    if (ext.code === 'rate_limit_exceeded') return { pause: Math.min(MAX_PAUSE_MS, (ext.retryAfter ?? 1) * 1000) };
    if (ext.code === 'unauthorized' || ext.code === 'forbidden')
      return { fail: `Your session no longer allows this import (${error.message}); import the file again to go on.` };
    if (ext.code === 'validation_error' || ext.code === 'payload_too_large' || ext.code === 'conflict') return null;
    throw new Error(`import record: ${ext.code ?? 'error'}: ${error.message}`); // passing: the kit tries the batch again
  }

  /** What one batch knows of the user's note folders (path, lower-cased → id) and of this job's files. */
  interface BatchState {
    token: string;
    folders?: Map<string, string>;
    files?: { byPath: Map<string, string>; byName: Map<string, string> };
  }

  async function folderOf(job: TransferJob, state: BatchState, folder: string[]): Promise<Outcome | string | null> {
    if (!state.folders) {
      const { data, error } = await call(state.token, FOLDERS, {});
      if (error) return refusal(error) ?? { skipped: error.message };
      state.folders = new Map(
        (data!.noteFolders as { id: string; path: string }[]).map((f) => [f.path.toLowerCase(), f.id]),
      );
    }
    const names = folder.map((n) => [...n.trim()].slice(0, 100).join('') || '_');
    const rootPath = job.targetFolderId
      ? [...state.folders].find(([, id]) => id === job.targetFolderId)?.[0]
      : undefined;
    if (job.targetFolderId && rootPath === undefined)
      return { fail: 'The target folder (target_folder_id) is not one of your note folders.' };
    let parent: string | null = job.targetFolderId;
    let at = rootPath ?? '';
    let made = 0;
    for (const name of names) {
      at = at ? `${at}/${name.toLowerCase()}` : name.toLowerCase();
      const known = state.folders.get(at);
      if (known) {
        parent = known;
        continue;
      }
      const { data, error } = await call(state.token, CREATE_FOLDER, { name, parentId: parent });
      if (error) return refusal(error) ?? { skipped: `its folder ${name}: ${error.message}` };
      parent = (data!.createNoteFolder as { id: string }).id;
      state.folders.set(at, parent);
      made++;
    }
    return made ? `${parent ?? ''}+${made}` : parent;
  }

  async function filesOf(job: TransferJob, state: BatchState) {
    if (!state.files) {
      const rows = await dataSource.manager.find(ImportSource, { where: { jobId: job.id, kind: 'file' } });
      state.files = {
        byPath: new Map(rows.map((r) => [r.path, r.targetId])),
        byName: new Map(rows.map((r) => [r.path.split('/').pop()!, r.targetId])),
      };
    }
    return state.files;
  }

  async function remember(job: TransferJob, kind: string, sourceKey: string, path: string, targetId: string) {
    try {
      await dataSource.manager.insert(ImportSource, {
        id: crypto.randomUUID(),
        ownerId: job.ownerId,
        jobId: job.id,
        kind,
        sourceKey,
        path,
        targetId,
        createdAt: new Date(),
      });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }

  /** True when this owner imported the source before (its old id then maps to what it became). */
  async function importedBefore(job: TransferJob, kind: string, sourceKey: string, sourceId?: string) {
    const known = await dataSource.manager.findOneBy(ImportSource, { ownerId: job.ownerId, kind, sourceKey });
    if (known) await mapId(job, sourceId, known.targetId);
    return known !== null;
  }

  /** Remembers what an export's old id became, for the hub nodes and links that name it. */
  async function mapId(job: TransferJob, oldId: string | undefined, newId: string | undefined): Promise<void> {
    if (oldId && newId) await remember(job, 'ref', sha256(`${job.id}\0${oldId}`), oldId, newId);
  }

  /** What this job made of these old ids (old id → new id). */
  async function mappedIds(job: TransferJob, oldIds: string[]): Promise<Map<string, string>> {
    if (!oldIds.length) return new Map();
    const rows = await dataSource.manager.find(ImportSource, {
      where: { ownerId: job.ownerId, kind: 'ref', sourceKey: In(oldIds.map((id) => sha256(`${job.id}\0${id}`))) },
    });
    return new Map(rows.map((r) => [r.path, r.targetId]));
  }

  /** An export's note body with the links to vault items and notes this job made pointed at the new ones. */
  async function pointLinks(job: TransferJob, body: string): Promise<string> {
    const LINK = /\/api\/v1\/(?:vault\/items|notes)\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})/gi;
    const ids = [...new Set([...body.matchAll(LINK)].map((m) => m[1]))].slice(0, 1000);
    const mapped = await mappedIds(job, ids);
    return mapped.size ? body.replace(LINK, (all, id: string) => all.replace(id, mapped.get(id) ?? id)) : body;
  }

  /**
   * Archives what was just made (its version from the creation), reading the version again if
   * something (enrichment) moved it meanwhile. Answers a problem, or null.
   */
  async function archive(state: BatchState, what: 'item' | 'note', id: string, version: number) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const { error } = await call(state.token, what === 'item' ? ARCHIVE_ITEM : ARCHIVE_NOTE, { id, version });
      if (!error) return null;
      if (what === 'note' || error.extensions?.code !== 'conflict') return `it could not be archived: ${error.message}`;
      const again = await call(state.token, ITEM_VERSION, { id });
      const item = again.data?.vaultItem as { version: number; archived: boolean } | undefined;
      if (!item) return `it could not be archived: ${error.message}`;
      if (item.archived) return null;
      version = item.version;
    }
    return 'it could not be archived: its version kept moving';
  }

  /** A vault capture's answer: created (and archived if asked), a duplicate, or refused. */
  async function captured(
    job: TransferJob,
    state: BatchState,
    record: ItemMeta & { path: string },
    result: { data?: Record<string, unknown> | null; error?: GqlError },
    refusedAs: string,
  ): Promise<Outcome & { id?: string }> {
    const { data, error } = result;
    if (error) {
      const existing = error.extensions?.details?.existingId;
      await mapId(job, record.sourceId, existing);
      return { ...(refusal(error) ?? { skipped: `${refusedAs}: ${error.message}` }), id: existing };
    }
    const item = data!.captureVaultItem as { id: string; version: number };
    await mapId(job, record.sourceId, item.id);
    const problem = record.archived ? await archive(state, 'item', item.id, item.version) : null;
    return { created: 'vaultItems', id: item.id, ...(problem ? { problems: [problem] } : {}) };
  }

  /** The capture arguments every vault record may carry. */
  const captureVars = (r: ItemMeta & { title?: string | null; tags?: string[]; addedAt?: string }) => ({
    title: r.title || null,
    tags: r.tags?.length ? r.tags : null,
    // A date ahead of this clock (a wrong clock where it was saved) is no capture time: now, then.
    capturedAt: r.addedAt && Date.parse(r.addedAt) <= Date.now() ? r.addedAt : null,
    favorite: r.favorite ?? null,
    category: r.category ?? null,
  });

  async function apply(job: TransferJob, state: BatchState, record: ImportRecord): Promise<Outcome> {
    switch (record.kind) {
      case 'skip':
        return { skipped: record.message };
      case 'hub': {
        const key = sha256(`${record.path}\0${record.hash}`);
        if (await dataSource.manager.existsBy(ImportSource, { ownerId: job.ownerId, kind: 'hub', sourceKey: key }))
          return { duplicate: true };
        const { data, error } = await call(state.token, IMPORT_HUB, {
          name: record.name || 'Hub',
          canvas: record.canvas,
        });
        if (error) return refusal(error) ?? { skipped: `the hubs refused it: ${error.message}` };
        const hubId = (data!.importHub as { id: string }).id;
        await remember(job, 'hub', key, record.path, hubId);
        if (job.format !== 'export') return { created: 'hubs' };
        const refs = canvasRefs(record.canvas).map((r) => r.id);
        const problems = await pointHubRefs(
          (query, variables) => call(state.token, query, variables),
          hubId,
          record.canvas,
          await mappedIds(job, refs),
        );
        return { created: 'hubs', problems };
      }
      case 'file': {
        const bytes = await store.read(record.blob, 0, record.size);
        if (!bytes) return { skipped: 'its bytes are gone' };
        const result = await call(state.token, CAPTURE_FILE, {
          file: { name: [...record.name].slice(0, 255).join(''), contentBase64: bytes.toString('base64') },
          ...captureVars(record),
        });
        const outcome = await captured(job, state, record, result, 'the vault refused it');
        if (outcome.id) {
          await remember(job, 'file', sha256(`${job.id}\0${record.path}`), record.path, outcome.id);
          state.files?.byPath.set(record.path, outcome.id);
          state.files?.byName.set(record.name, outcome.id);
        }
        await store.delete(record.blob);
        return outcome;
      }
      case 'text': {
        // The vault knows no text again (it has no URL or bytes to compare): this module does.
        const key = sha256(`text\0${record.hash}`);
        if (await importedBefore(job, 'text', key, record.sourceId)) return { duplicate: true };
        const result = await call(state.token, CAPTURE_TEXT, { text: record.text, ...captureVars(record) });
        const outcome = await captured(job, state, record, result, 'the vault refused this text');
        if ('created' in outcome) await remember(job, 'text', key, record.path, outcome.id!);
        return outcome;
      }
      case 'note': {
        const key = sha256(`${record.path}\0${record.hash}`);
        if (await importedBefore(job, 'note', key, record.sourceId)) return { duplicate: true };
        const folder = record.folder.length || job.targetFolderId ? await folderOf(job, state, record.folder) : null;
        if (folder !== null && typeof folder === 'object') return folder;
        const [folderId, made] = folder?.includes('+') ? folder.split('+') : [folder, '0'];
        let body: string;
        if (job.format === 'export') body = await pointLinks(job, record.body);
        else {
          const files = await filesOf(job, state);
          body = rewriteLinks(record.body, record.path, files.byPath, files.byName);
        }
        const { data, error } = await call(state.token, CREATE_NOTE, {
          title: record.title,
          body,
          folderId: folderId || null,
          tags: record.tags.length ? record.tags : null,
          pinned: record.pinned ?? null,
        });
        if (error) return refusal(error) ?? { skipped: `the notes refused it: ${error.message}` };
        const note = data!.createNote as { id: string; version: number };
        await remember(job, 'note', key, record.path, note.id);
        await mapId(job, record.sourceId, note.id);
        const problem = record.archived ? await archive(state, 'note', note.id, note.version) : null;
        return { created: 'notes', folders: Number(made), ...(problem ? { problems: [problem] } : {}) };
      }
      default: {
        if (!/^https?:\/\//i.test(record.url)) return { skipped: `not an http(s) link: ${record.url.slice(0, 100)}` };
        const result = await call(state.token, CAPTURE_LINK, { url: record.url, ...captureVars(record) });
        return captured(job, state, record, result, 'the vault refused this link');
      }
    }
  }

  return {
    kind: IMPORT_JOB_KIND,
    batchRows: 1,
    async batch(ctx) {
      const job = await dataSource.manager.findOneBy(TransferJob, { id: ctx.job.params.transferId });
      if (!job) return false;
      if (job.state !== 'queued' && job.state !== 'running') {
        await removeBlobs(job);
        return false;
      }
      try {
        if (job.cursor === null) {
          const total = await readFile(job);
          await ctx.transaction(async (m) => {
            await m
              .createQueryBuilder()
              .update(TransferJob)
              .set({ cursor: 0, total, state: 'running' })
              .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
              .execute();
          });
          return true;
        }
        return await applyBatch(ctx, job);
      } catch (err) {
        if (err instanceof JobLost) throw err;
        if (err instanceof ImportFailed) {
          await fail(job, err.message);
          return false;
        }
        throw err;
      }
    },
  };

  /** The records from the cursor: at least one whole line (a window grown for a long one). */
  async function window(job: TransferJob): Promise<Buffer> {
    for (let size = RECORDS_WINDOW; ; size *= 4) {
      const bytes = (await store.read(recordsKey(job.id), job.cursor!, size)) ?? Buffer.alloc(0);
      if (bytes.length < size || bytes.includes(0x0a) || size >= 64 * RECORDS_WINDOW) return bytes;
    }
  }

  async function applyBatch(
    ctx: Parameters<JobHandler<{ transferId: string }>['batch']>[0],
    job: TransferJob,
  ): Promise<boolean> {
    const records = await window(job);
    const counts: TransferCounts = { ...job.counts };
    const errors: TransferError[] = [...job.errors];
    let cursor = job.cursor!;
    let done = job.done;
    let failure: string | null = null;
    let state: BatchState | undefined;
    let at = 0;
    for (let n = 0; n < deps.config.IMPORT_BATCH_RECORDS; n++) {
      const end = records.indexOf(0x0a, at);
      if (end < 0) break;
      // A turn of the event loop between records: on SQLite a record's GraphQL calls may all
      // complete without one (synchronous statements), and 50 records held it ~200 ms.
      if (n > 0) await nextTurn();
      const record = JSON.parse(records.subarray(at, end).toString('utf8')) as ImportRecord;
      state ??= { token: tokenFor(job) };
      const outcome = await apply(job, state, record);
      if ('pause' in outcome) {
        await new Promise((resolve) => setTimeout(resolve, outcome.pause));
        break; // this record again, in the next batch
      }
      if ('fail' in outcome) {
        failure = outcome.fail;
        break;
      }
      if ('created' in outcome) {
        counts[outcome.created]++;
        counts.folders += outcome.folders ?? 0;
        // Made, but not all of it came across (an archive flag, a hub node): said, not counted as skipped.
        for (const problem of outcome.problems ?? [])
          if (errors.length < MAX_JOB_ERRORS) errors.push({ path: record.path, message: problem });
      } else if ('duplicate' in outcome) counts.duplicates++;
      else {
        counts.skipped++;
        if (errors.length < MAX_JOB_ERRORS) errors.push({ path: record.path, message: outcome.skipped });
      }
      at = end + 1;
      cursor = job.cursor! + at;
      done++;
    }
    const finished = failure === null && done >= job.total;
    const now = new Date();
    const progressed = await ctx.transaction(async (m) => {
      const next = failure !== null ? 'failed' : finished ? 'succeeded' : 'running';
      if (failure !== null) errors.push({ path: '', message: failure });
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({
          cursor,
          done,
          counts,
          errors: errors.slice(-MAX_JOB_ERRORS),
          state: next,
          ...(next !== 'running' ? { finishedAt: now } : {}),
        })
        .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
        .execute();
      if (affectedRows(r) !== 1) return false; // canceled meanwhile: what was done stays
      const row = await m.findOneByOrFail(TransferJob, { id: job.id });
      if (next !== 'running') {
        await recordEvent(m, {
          type: 'import.finished',
          userId: job.ownerId,
          resourceId: job.id,
          data: { ...jobEventData(row), ...(failure ? { error: failure } : {}) },
        });
      } else if (!job.progressAt || now.getTime() - job.progressAt.getTime() >= 1000) {
        await m.update(TransferJob, { id: job.id }, { progressAt: now });
        await recordEvent(m, {
          type: 'import.progress',
          userId: job.ownerId,
          resourceId: job.id,
          data: jobEventData(row),
        });
      }
      return next === 'running';
    });
    if (!progressed) await removeBlobs(job);
    return progressed;
  }
}
