// Work over many of an owner's notes, on the kit's job queue (lib/kit/jobs.ts): a tag rename, and
// a deleted user's notes and folders, in batches of at most NOTES_BATCH_ROWS rows per transaction.
// A job is a row written in the transaction that asks for it; the queue takes users in turn, so
// one user's burst of renames never holds back another's, and limits each user's pending jobs.
//
// Each batch is safe to run twice or in two processes at once: a rename writes a note only at the
// version it read (a note changed meanwhile is read again in a later batch), and the cascade
// emits a note's event only in the transaction whose DELETE removed it.
import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import type { BatchContext, JobQueue } from '../../lib/kit/jobs';
import { publish } from '../../lib/kit/typed-events';
import type { UserCascadeBatch } from '../../lib/kit/user-cascade';
import { Note } from './entities/note';
import { NoteFolder } from './entities/note-folder';
import { NoteLink, NoteTag } from './entities/note-rows';
import { forgetOwner } from './owner-row';
import { validationError } from '../../lib/errors';
import { excerptOf, isTagWithin, MAX_TAG_LENGTH, renamedTag, renameHashtags, TAG_PATTERN } from './markdown';
import { TAG_RANGE, tagRange, tagUnion, writeTags } from './note-service';
import { indexNote, unindexNotes } from './search';
import { NoteDeleted, NoteFolderDeleted, NoteUpdated } from './events';

export const TAG_RENAME = 'notes.tag_rename';

const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

type RenameParams = { from: string; to: string };

export class NoteJobs {
  /** Batches in a row that changed no note (every one changed meanwhile), per job: a few end it. */
  private readonly idle = new Map<string, number>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly queue: JobQueue,
    private readonly options: { batchRows: number },
  ) {
    queue.register<RenameParams>({
      kind: TAG_RENAME,
      batchRows: options.batchRows,
      batch: async (ctx) => {
        const done = await this.renameBatch(ctx);
        const idle = done === 0 ? (this.idle.get(ctx.job.id) ?? 0) + 1 : 0;
        if (done === false || idle >= 10) {
          this.idle.delete(ctx.job.id);
          return false;
        }
        this.idle.set(ctx.job.id, idle);
        return true;
      },
    });
  }

  /** Asks for `from` (and the tags nested in it) to become `to` in every note of the owner. */
  async requestTagRename(ownerId: string, from: string, to: string): Promise<{ id: string } & RenameParams> {
    const tagOf = (field: string, raw: string) => {
      const tag = raw.trim().toLowerCase();
      if (!TAG_PATTERN.test(tag) || tag.length > MAX_TAG_LENGTH)
        throw validationError({
          [field]: [`is not a tag: 1–${MAX_TAG_LENGTH} characters of a-z 0-9 _ - and / between parts`],
        });
      return tag;
    };
    const source = tagOf('from', from);
    const target = tagOf('to', to);
    if (source === target) throw validationError({ to: ['must differ from from'] });
    if (isTagWithin(target, source))
      throw validationError({ to: ['must not be within from (it would be renamed again)'] });
    const params = { from: source, to: target };
    const job = await this.queue.request<RenameParams>({ kind: TAG_RENAME, ownerId, params });
    return { id: job.id, ...params };
  }

  /** One batch of a tag rename: the notes changed, or false when no note of the owner has the tag any more. */
  private async renameBatch(ctx: BatchContext<RenameParams>): Promise<number | false> {
    const { job, limit } = ctx;
    const { from, to } = job.params;
    // The notes that still have the tag (or one nested in it), found by the tag's index range.
    const tagged = await this.dataSource.manager.query<{ id: string }[]>(
      `SELECT DISTINCT t.note_id AS id FROM note_tags t WHERE t.owner_id = ? AND ${TAG_RANGE} LIMIT ${limit}`,
      [job.ownerId, ...tagRange(from)],
    );
    const notes = tagged.length
      ? await this.dataSource.manager.findBy(Note, { id: In(tagged.map((t) => t.id)), ownerId: job.ownerId })
      : [];
    if (!notes.length) return false;
    // The rewrites are computed before the transaction, a few at a time between other requests.
    const rewritten: { note: Note; body: string; given: string[]; tags: string[] }[] = [];
    for (const note of notes) {
      const body = renameHashtags(note.body, from, to);
      const given = [...new Set(note.givenTags.map((t) => renamedTag(t, from, to) ?? t))];
      let tags: string[];
      try {
        tags = tagUnion(given, body);
      } catch {
        tags = [...new Set([...given, ...note.tags.map((t) => renamedTag(t, from, to) ?? t)])];
      }
      rewritten.push({ note, body, given, tags });
      if (rewritten.length % 20 === 0) await yieldToEvents();
    }
    return ctx.transaction(async (m) => {
      let changed = 0;
      for (const { note, body, given, tags } of rewritten) {
        const now = new Date();
        const bodyChanged = body !== note.body;
        const result = await m.update(
          Note,
          { id: note.id, ownerId: note.ownerId, version: note.version },
          {
            body,
            excerpt: excerptOf(body),
            givenTags: given,
            tags,
            version: note.version + 1,
            updatedAt: now,
          },
        );
        // Changed meanwhile (an edit won): the next batch reads it again.
        if (affectedRows(result) !== 1) continue;
        changed++;
        await writeTags(m, { id: note.id, ownerId: note.ownerId, tags }, false);
        if (bodyChanged) await indexNote(m, { ...note, body });
        await publish(m, NoteUpdated, {
          userId: note.ownerId,
          resourceId: note.id,
          data: {
            note_id: note.id,
            title: note.title,
            version: note.version + 1,
            folder_id: note.folderId,
            changed: bodyChanged ? ['body', 'tags'] : ['tags'],
          },
        });
      }
      return changed;
    });
  }

  /** One batch of a deleted user's notes, then of their folders; false when nothing is left. */
  readonly cascadeBatch: UserCascadeBatch = async (ctx) => {
    const ownerId = ctx.job.ownerId;
    const reason = { reason: 'user_deleted' as const };
    const notes = await this.dataSource.manager.find(Note, {
      select: { id: true, title: true, version: true, folderId: true, searchId: true },
      where: { ownerId },
      take: ctx.limit,
    });
    if (notes.length) {
      await ctx.transaction(async (m, removed) => {
        const ids = notes.map((n) => n.id);
        // Only what this transaction removes gets its event (another process may run the same job).
        const present = new Set((await this.lockedIds(m, Note, ids)).map((r) => r.id));
        const gone = notes.filter((n) => present.has(n.id));
        if (!gone.length) return;
        const goneIds = gone.map((n) => n.id);
        await m.delete(NoteTag, { noteId: In(goneIds) });
        await m.delete(NoteLink, { sourceId: In(goneIds) });
        await unindexNotes(
          m,
          gone.map((n) => n.searchId),
        );
        await m.delete(Note, { id: In(goneIds) });
        removed('notes', gone.length);
        for (const n of gone)
          await publish(m, NoteDeleted, {
            userId: ownerId,
            resourceId: n.id,
            data: { note_id: n.id, title: n.title, version: n.version, folder_id: n.folderId, ...reason },
          });
      });
      return true;
    }
    const folders = await this.dataSource.manager.find(NoteFolder, {
      where: { ownerId },
      take: ctx.limit,
    });
    if (folders.length) {
      await ctx.transaction(async (m, removed) => {
        const present = new Set(
          (
            await this.lockedIds(
              m,
              NoteFolder,
              folders.map((f) => f.id),
            )
          ).map((r) => r.id),
        );
        const gone = folders.filter((f) => present.has(f.id));
        if (!gone.length) return;
        await m.delete(NoteFolder, { id: In(gone.map((f) => f.id)) });
        removed('note_folders', gone.length);
        for (const f of gone)
          await publish(m, NoteFolderDeleted, {
            userId: ownerId,
            resourceId: f.id,
            data: { folder_id: f.id, name: f.name, parent_id: f.parentId, version: f.version, ...reason },
          });
      });
      return true;
    }
    // The owner's cap counters go last, once their notes and folders are gone.
    await ctx.transaction((m) => forgetOwner(m, ownerId));
    return false;
  };

  /** The rows of `ids` still there, locked until the transaction ends (MySQL; SQLite has one writer). */
  private lockedIds(
    m: EntityManager,
    entity: typeof Note | typeof NoteFolder,
    ids: string[],
  ): Promise<{ id: string }[]> {
    const query = m.createQueryBuilder(entity, 'r').select('r.id', 'id').where('r.id IN (:...ids)', { ids });
    if (m.connection.options.type !== 'better-sqlite3') query.setLock('pessimistic_write');
    return query.getRawMany();
  }
}
