// An export: the whole account as one zip, written as a stream (yazl) into the blob store
// (begin/append/commit: one runner writes it), never whole in memory: every entry is produced in
// turn, a page of the owning module's GraphQL list at a time, through the gateway, as the user
// (the same per-batch token as imports, read scopes only). The layout is the contract's:
// notes/<folder path>/<title>.md (YAML front matter, the body as stored), vault/bookmarks.html
// (Netscape), vault/items.json, vault/files/<id>-<name>, hubs/<name>.canvas, voices.json,
// manifest.json. One kit job, one batch; progress updates renew its lease.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { DataSource } from 'typeorm';
import { stringify as yamlStringify } from 'yaml';
import yazl from 'yazl';
import type { BlobStore } from '../../lib/blob-store';
import { affectedRows } from '../../lib/database/portable';
import type { GatewayLink } from '../../lib/gateway-link';
import { JobHandler, JobLost } from '../../lib/kit/jobs';
import { recordEvent } from '../../lib/outbox';
import type { TokenSigner } from '../../lib/tokens';
import { TransferJob } from './entities/transfer-job';
import { EXPORT_JOB_KIND, exportKey, MAX_JOB_ERRORS } from './transfer-rules';

const EXPORT_SCOPES = ['notes:read', 'vault:read', 'hubs:read', 'tts:read'];
const TOKEN_TTL_SECONDS = 300;
const CHUNK = 1024 * 1024;

export const EXPORT_PARTS = ['notes', 'vault', 'hubs', 'voices', 'audio'] as const;
export const DEFAULT_EXPORT_PARTS = ['notes', 'vault', 'hubs', 'voices'];

class ExportFailed extends Error {}

/** A name safe in every file system: no separators or reserved characters, at most 120 characters. */
export function fileName(name: string, fallback = 'Untitled'): string {
  const clean = [
    ...name
      // eslint-disable-next-line no-control-regex -- control characters are what is removed
      .replace(/[/\\:*?"<>|\u0000-\u001f\u007f]+/g, '_')
      .replace(/^[.\s]+|[.\s]+$/g, '')
      .trim(),
  ]
    .slice(0, 120)
    .join('');
  return clean || fallback;
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

interface ExportedHub {
  id: string;
  name: string;
  canvas: { nodes?: { id: string }[] };
  refNodes: { id: string; type: string; refId: string | null; missing: boolean }[];
}

/**
 * The hub's canvas with this service's extension on each node that points at a note, an item or
 * a voice (`ref: { type, id }`; JSON Canvas readers ignore fields they do not know): what an
 * import of the export points at the new ones. A node whose target is gone has none.
 */
function withRefs(hub: ExportedHub): unknown {
  const refs = new Map(hub.refNodes.filter((r) => r.refId && !r.missing).map((r) => [r.id, r]));
  if (!refs.size) return hub.canvas;
  return {
    ...hub.canvas,
    nodes: hub.canvas.nodes?.map((node) => {
      const ref = refs.get(node.id);
      return ref ? { ...node, ref: { type: ref.type, id: ref.refId } } : node;
    }),
  };
}

export interface ExportRunnerDeps {
  dataSource: DataSource;
  store: BlobStore;
  gateway?: GatewayLink;
  signer: () => TokenSigner | null;
}

export function exportHandler(deps: ExportRunnerDeps): JobHandler<{ transferId: string }> {
  const { dataSource, store } = deps;

  async function finish(job: TransferJob, state: 'succeeded' | 'failed', set: Partial<TransferJob>, error?: string) {
    await dataSource.transaction(async (m) => {
      const r = await m
        .createQueryBuilder()
        .update(TransferJob)
        .set({ ...set, state, activeOwner: null, finishedAt: new Date() })
        .where('id = :id AND state IN (:...states)', { id: job.id, states: ['queued', 'running'] })
        .execute();
      if (affectedRows(r) !== 1) return;
      const row = await m.findOneByOrFail(TransferJob, { id: job.id });
      await recordEvent(m, {
        type: 'export.finished',
        userId: job.ownerId,
        resourceId: job.id,
        data: { export_id: job.id, state, bytes: row.bytes, ...(error ? { error } : {}) },
      });
    });
  }

  return {
    kind: EXPORT_JOB_KIND,
    batchRows: 1,
    async batch(ctx) {
      const job = await dataSource.manager.findOneBy(TransferJob, { id: ctx.job.params.transferId });
      if (!job || (job.state !== 'queued' && job.state !== 'running')) return false;
      const signer = deps.signer();
      const gateway = deps.gateway;
      if (!signer || !gateway?.bound) {
        await finish(job, 'failed', {
          errors: [{ path: '', message: 'This server cannot export in the background (no signing key or gateway).' }],
        });
        return false;
      }
      const p = job.principal;
      const token = signer.sign(
        {
          userId: p.userId,
          sessionId: p.sessionId,
          roles: p.roles,
          scopes: p.scopes.filter((s) => EXPORT_SCOPES.includes(s)),
        },
        'access',
        TOKEN_TTL_SECONDS,
      ).token;
      const call = async (query: string, variables: Record<string, unknown> = {}) => {
        const result = await gateway.execute({
          query,
          variables,
          headers: { authorization: `Bearer ${token}` },
          clientIp: '',
        });
        const error = result.errors?.[0];
        if (error) throw new ExportFailed(`${error.message} (${JSON.stringify(error.extensions?.code ?? 'error')})`);
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a GraphQL answer, read by shape below
        const data: Record<string, any> = result.data ?? {};
        return data;
      };
      const include = new Set(job.options?.include ?? DEFAULT_EXPORT_PARTS);
      const counts = { notes: 0, folders: 0, vault_items: 0, files: 0, hubs: 0, voices: 0 };
      let done = 0;
      const progress = async () => {
        await ctx.transaction(async (m) => {
          await m.update(TransferJob, { id: job.id }, { done, state: 'running' });
        });
      };

      const writer = await store.begin(`${exportKey(job.id)}.part`);
      const zip = new yazl.ZipFile();
      const pump = (async () => {
        for await (const chunk of zip.outputStream as AsyncIterable<Buffer>) {
          await writer.append(chunk);
        }
      })();
      /** An entry produced piece by piece: written as yazl reaches it, with back-pressure. */
      const entry = async (
        name: string,
        produce: (write: (data: string | Buffer) => Promise<void>) => Promise<void>,
      ) => {
        const stream = new PassThrough();
        zip.addReadStream(stream, name);
        await produce(async (data) => {
          if (!stream.write(data)) await once(stream, 'drain');
        });
        stream.end();
      };
      const used = new Set<string>();
      const unique = (path: string) => {
        let candidate = path;
        for (let n = 2; used.has(candidate.toLowerCase()); n++) candidate = path.replace(/(\.[^./]+)?$/, ` (${n})$1`);
        used.add(candidate.toLowerCase());
        return candidate;
      };
      try {
        await progress();
        if (include.has('notes')) {
          const folders = new Map<string, string>(
            ((await call('query { noteFolders { id path } }')).noteFolders as { id: string; path: string }[]).map(
              (f) => [
                f.id,
                f.path
                  .split('/')
                  .map((n) => fileName(n, '_'))
                  .join('/'),
              ],
            ),
          );
          counts.folders = folders.size;
          for (const path of folders.values()) zip.addEmptyDirectory(`notes/${path}/`);
          for (let after: string | null = null; ;) {
            const page = (
              await call(
                'query ($after: String) { notes(first: 100, after: $after, archived: "all") { items { id } nextCursor } }',
                { after },
              )
            ).notes as { items: { id: string }[]; nextCursor: string | null };
            for (const { id } of page.items) {
              const note = (
                await call(
                  'query ($id: ID!) { note(id: $id) { id title body tags folderId pinned archived createdAt updatedAt } }',
                  { id },
                )
              ).note as Record<string, unknown> & { title: string; body: string; folderId: string | null };
              const dir = note.folderId ? `notes/${folders.get(note.folderId) ?? ''}/` : 'notes/';
              const front = yamlStringify({
                id: note.id,
                title: note.title,
                tags: note.tags,
                created: note.createdAt,
                updated: note.updatedAt,
                pinned: note.pinned,
                archived: note.archived,
              });
              await entry(unique(`${dir}${fileName(note.title)}.md`), (write) =>
                write(`---\n${front}---\n${note.body}`),
              );
              counts.notes++;
              done++;
            }
            await progress();
            if (!page.nextCursor) break;
            after = page.nextCursor;
          }
        }
        if (include.has('vault')) {
          // Archived items too; trashed ones are in no list (the trash is not exported).
          const ITEMS =
            'query ($after: String) { vaultItems(first: 100, after: $after, archived: "all") { items { id kind url title tags { name source } category classification { by } favorite archived fileName mediaType sizeBytes capturedAt } nextCursor } }';
          type Item = {
            id: string;
            kind: string;
            url: string | null;
            title: string | null;
            tags: { name: string }[];
            fileName: string | null;
            capturedAt: string;
          };
          const pages = async (each: (item: Item) => Promise<void>) => {
            for (let after: string | null = null; ;) {
              const page = (await call(ITEMS, { after })).vaultItems as { items: Item[]; nextCursor: string | null };
              for (const item of page.items) await each(item);
              if (!page.nextCursor) break;
              after = page.nextCursor;
            }
          };
          await entry('vault/items.json', async (write) => {
            let first = true;
            await write('[\n');
            await pages(async (item) => {
              // A text item's text is not in the list's pages: read whole, one at a time.
              const text: { text?: string | null } =
                item.kind === 'text'
                  ? ((await call('query ($id: ID!) { vaultItem(id: $id) { text } }', { id: item.id })).vaultItem as {
                      text: string | null;
                    })
                  : {};
              await write(`${first ? '' : ',\n'}${JSON.stringify({ ...item, ...text })}`);
              first = false;
              counts.vault_items++;
            });
            await write('\n]\n');
          });
          await entry('vault/bookmarks.html', async (write) => {
            await write(
              '<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">\n<TITLE>Bookmarks</TITLE>\n<H1>Bookmarks</H1>\n<DL><p>\n',
            );
            await pages(async (item) => {
              if (item.kind !== 'link' || !item.url) return;
              const added = Math.floor(new Date(item.capturedAt).getTime() / 1000);
              const tags = item.tags.map((t) => t.name).join(',');
              await write(
                `    <DT><A HREF="${escapeHtml(item.url)}" ADD_DATE="${added}"${tags ? ` TAGS="${escapeHtml(tags)}"` : ''}>${escapeHtml(item.title ?? item.url)}</A>\n`,
              );
            });
            await write('</DL><p>\n');
          });
          await pages(async (item) => {
            if (item.kind !== 'file') return;
            await entry(`vault/files/${item.id}-${fileName(item.fileName ?? 'file')}`, async (write) => {
              for (let offset = 0; ; offset += CHUNK) {
                const got = (
                  await call(
                    'query ($id: ID!, $offset: Int!, $length: Int!) { vaultItemContent(id: $id) { chunk(offset: $offset, length: $length) } }',
                    { id: item.id, offset, length: CHUNK },
                  )
                ).vaultItemContent as { chunk: string };
                const bytes = Buffer.from(got.chunk, 'base64');
                if (bytes.length) await write(bytes);
                if (bytes.length < CHUNK) break;
              }
            });
            counts.files++;
            done++;
          });
          await progress();
        }
        if (include.has('hubs')) {
          for (let after: string | null = null; ;) {
            const page = (
              await call(
                'query ($after: String) { hubs(first: 20, after: $after) { items { id name canvas refNodes { id type refId missing } } nextCursor } }',
                { after },
              )
            ).hubs as { items: ExportedHub[]; nextCursor: string | null };
            for (const hub of page.items) {
              await entry(unique(`hubs/${fileName(hub.name)}.canvas`), (write) =>
                write(JSON.stringify(withRefs(hub), null, 2)),
              );
              counts.hubs++;
              done++;
            }
            await progress();
            if (!page.nextCursor) break;
            after = page.nextCursor;
          }
        }
        if (include.has('voices')) {
          const voices: unknown[] = [];
          for (let after: string | null = null; ;) {
            const page = (
              await call(
                'query ($after: String) { voices(first: 100, after: $after) { items { id name description baseVoice voiceBlend language speed createdAt updatedAt } nextCursor } }',
                { after },
              )
            ).voices as { items: unknown[]; nextCursor: string | null };
            voices.push(...page.items);
            if (!page.nextCursor) break;
            after = page.nextCursor;
          }
          counts.voices = voices.length;
          zip.addBuffer(Buffer.from(JSON.stringify(voices, null, 2)), 'voices.json');
        }
        zip.addBuffer(
          Buffer.from(
            JSON.stringify(
              { format_version: 1, created_at: new Date().toISOString(), include: [...include], counts },
              null,
              2,
            ),
          ),
          'manifest.json',
        );
        zip.end();
        await pump;
        const size = await writer.commit(exportKey(job.id));
        await finish(job, 'succeeded', { bytes: size, done, total: done });
      } catch (err) {
        zip.end();
        await pump.catch(() => undefined);
        await writer.abort();
        if (err instanceof JobLost) throw err;
        if (!(err instanceof ExportFailed)) throw err;
        await finish(
          job,
          'failed',
          { errors: [{ path: '', message: err.message }].slice(-MAX_JOB_ERRORS) },
          err.message,
        );
      }
      return false;
    },
  };
}
