// Work over many of an owner's notes, done in the background in batches (at most NOTES_BATCH_ROWS
// rows per transaction): a tag rename, and a deleted user's notes and folders. A job is a row of
// note_jobs, written in the transaction that asks for it, so nothing acknowledged is lost; it is
// run when asked for, and at start for what a stopped process left. No polling while idle.
//
// Each batch is safe to run twice or in two processes at once: a rename writes a note only at the
// version it read (a note changed meanwhile is read again in a later batch), and the cascade
// emits a note's event only in the transaction whose DELETE removed it.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { recordEvent } from '../../lib/outbox';
import { Note } from './entities/note';
import { NoteFolder } from './entities/note-folder';
import { NoteJob, NoteLink, NoteTag } from './entities/note-rows';
import { forgetOwner } from './owner-row';
import { validationError } from '../../lib/errors';
import { excerptOf, isTagWithin, MAX_TAG_LENGTH, renamedTag, renameHashtags, TAG_PATTERN } from './markdown';
import { TAG_RANGE, tagRange, tagUnion, writeTags } from './note-service';
import { indexNote, unindexNotes } from './search';

const yieldToEvents = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Writes a job in the caller's transaction; wake the runner once it commits. */
export async function addJob(
  m: EntityManager,
  ownerId: string,
  kind: NoteJob['kind'],
  params: Record<string, string> = {},
): Promise<NoteJob> {
  const job = m.create(NoteJob, { id: uuidv7(), ownerId, kind, params, createdAt: new Date() });
  await m.insert(NoteJob, job);
  return job;
}

export class NoteJobRunner {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly options: { batchRows: number; logger?: Logger },
  ) {}

  /** Runs the pending jobs (now, or after the run in progress); resolves when none is left. */
  wake(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.runPending();
        } while (this.again && !this.stopped);
      } catch (err) {
        this.options.logger?.error({ err }, 'note job failed; it is retried at the next start or request');
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }

  /** Asks for `from` (and the tags nested in it) to become `to` in every note of the owner. */
  async requestTagRename(ownerId: string, from: string, to: string): Promise<NoteJob> {
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
    const job = await inTransaction(this.dataSource, (m) =>
      addJob(m, ownerId, 'tag_rename', { from: source, to: target }),
    );
    void this.wake();
    return job;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async runPending(): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const job = await this.dataSource.manager.findOne(NoteJob, { where: {}, order: { createdAt: 'ASC', id: 'ASC' } });
      if (!job) return;
      // A batch whose every note was changed meanwhile makes no progress; a few in a row end the job.
      let idle = 0;
      for (let more = true; more && !this.stopped && idle < 10;) {
        const done = job.kind === 'tag_rename' ? await this.renameBatch(job) : await this.cascadeBatch(job);
        more = done !== false;
        idle = done === 0 ? idle + 1 : 0;
        await yieldToEvents();
      }
      if (!this.stopped) {
        await this.dataSource.manager.delete(NoteJob, { id: job.id });
        this.options.logger?.info({ job: job.id, kind: job.kind, owner: job.ownerId }, 'note job done');
      }
    }
  }

  /** One batch of a tag rename: the notes changed, or false when no note of the owner has the tag any more. */
  private async renameBatch(job: NoteJob): Promise<number | false> {
    const { from, to } = job.params;
    // The notes that still have the tag (or one nested in it), found by the tag's index range.
    const tagged = await this.dataSource.manager.query<{ id: string }[]>(
      `SELECT DISTINCT t.note_id AS id FROM note_tags t WHERE t.owner_id = ? AND ${TAG_RANGE} LIMIT ${this.options.batchRows}`,
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
    return inTransaction(this.dataSource, async (m) => {
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
        if (bodyChanged) await indexNote(m, note.searchId, note.title, body);
        await recordEvent(m, {
          type: 'note.updated',
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
  private async cascadeBatch(job: NoteJob): Promise<boolean> {
    const ownerId = job.ownerId;
    const reason = { reason: 'user_deleted' };
    const notes = await this.dataSource.manager.find(Note, {
      select: { id: true, title: true, version: true, folderId: true, searchId: true },
      where: { ownerId },
      take: this.options.batchRows,
    });
    if (notes.length) {
      await inTransaction(this.dataSource, async (m) => {
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
        for (const n of gone)
          await recordEvent(m, {
            type: 'note.deleted',
            userId: ownerId,
            resourceId: n.id,
            data: { note_id: n.id, title: n.title, version: n.version, folder_id: n.folderId, ...reason },
          });
      });
      return true;
    }
    const folders = await this.dataSource.manager.find(NoteFolder, {
      where: { ownerId },
      take: this.options.batchRows,
    });
    if (folders.length) {
      await inTransaction(this.dataSource, async (m) => {
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
        for (const f of gone)
          await recordEvent(m, {
            type: 'note_folder.deleted',
            userId: ownerId,
            resourceId: f.id,
            data: { folder_id: f.id, name: f.name, parent_id: f.parentId, version: f.version, ...reason },
          });
      });
      return true;
    }
    await inTransaction(this.dataSource, (m) => forgetOwner(m, ownerId));
    return false;
  }

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
