// The notes module's rules for notes. Every change, its derived rows (tags, wiki links, the
// search index on SQLite) and its event are written in one transaction (the outbox,
// lib/outbox.ts); updates, archives and deletes name the version they expect (optimistic locking).
import { lostAtVersion, staleVersion } from '../../lib/kit/versioned';
import { v7 as uuidv7 } from 'uuid';
import type { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { In, IsNull, Not } from 'typeorm';
import { isSqlite } from '../../lib/database/driver';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction, retryOnLockConflict } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import type { ExpensiveGate } from '../../lib/kit/expensive';
import type { ExpensiveReads } from '../../lib/kit/expensive-reads';
import { decodeSearchCursor, encodeSearchCursor, Page, pageOf, PageOrder } from '../../lib/paging';
import { purgeAt, PurgeParams, TrashEntry, trashPage } from '../../lib/kit/trash';
import type { BatchContext } from '../../lib/kit/jobs';
import { Note, NoteFieldsBase, NoteSummary } from './entities/note';
import { snakeCase } from '../../lib/naming';
import { NoteFolder } from './entities/note-folder';
import { NoteLink, NoteTag } from './entities/note-rows';
import {
  excerptOf,
  hashtags,
  idLinkKey,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  MAX_TITLE_LENGTH,
  TAG_PATTERN,
  titleFromBody,
  titleKey,
  titleLinkKey,
  wikiLinks,
} from './markdown';
import { ensureOwnerRow, lockOwner, NOTES_CAP, releaseSlots, takeSlots } from './owner-row';
import { indexNote, searchNoteIds, searchTerms, unindexNotes } from './search';
import { publish } from '../../lib/kit/typed-events';
import {
  NoteArchived,
  NoteCreated,
  NoteDeleted,
  NoteRestored,
  NoteTrashed,
  NoteUnarchived,
  NoteUpdated,
} from './events';
import { isUuid } from '../../lib/validators';

export const MAX_BODY_CHARACTERS = 100_000;

export interface NoteLimits {
  /** NOTES_PER_USER */
  notesPerUser: number;
  /** Words and phrases of one `q` (SEARCH_MAX_TERMS). */
  searchMaxTerms: number;
  /** SQLite: matches ranked at most (SEARCH_CANDIDATES). */
  searchCandidates: number;
  /** The process's per-user gate on expensive operations (EXPENSIVE_PER_USER). */
  expensive: ExpensiveGate;
  /** Where the search's ranking statement runs (off the event loop on SQLite). */
  reads: ExpensiveReads;
  /** TRASH_RETENTION_DAYS (default 30). */
  trashRetentionDays?: number;
}

/** The fields with rules of their own; every other column a client may set is a plain field. */
interface RuledFields {
  title?: string | null;
  body?: string | null;
  folderId?: string | null;
  tags?: string[] | null;
}
const RULED: ReadonlySet<string> = new Set(['title', 'body', 'folderId', 'tags']);

/** Columns of a note only the service sets. */
type ServiceSet = 'id' | 'ownerId' | 'archived' | 'archivedAt' | 'version' | 'createdAt' | 'updatedAt';

/**
 * Plain fields: the rest of the shared columns (`pinned`, …), taken as given. A column added to
 * NoteFieldsBase is one without a change here: the service copies it on create and update.
 */
type PlainFields = { [K in Exclude<keyof NoteFieldsBase, ServiceSet | keyof RuledFields>]?: NoteFieldsBase[K] | null };

export type NoteInput = RuledFields & PlainFields;

export type ArchivedFilter = 'false' | 'true' | 'all';

export interface NoteFilter {
  folderId?: string | null;
  tag?: string | null;
  archived?: ArchivedFilter | null;
  pinned?: boolean | null;
  q?: string | null;
}

/** Columns a listing never reads: the body and the service's own bookkeeping. */
const NOT_LISTED: ReadonlySet<string> = new Set(['body', 'givenTags', 'titleKey', 'deletedAt', 'searchId']);

/** The plain fields given (null only where the column takes null: `pinned: null` leaves it as it is). */
function plainFields(dataSource: DataSource, input: NoteInput): Partial<Note> {
  const columns = dataSource.getMetadata(Note);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (RULED.has(key) || value === undefined) continue;
    const column = columns.findColumnWithPropertyName(key);
    if (value === null && !column?.isNullable) continue;
    out[key] = value;
  }
  return out;
}

/** Backlinks in the order the linking notes were made (ids are UUIDv7). */
const BACKLINK_ORDER: PageOrder<Note> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };
/** The plain list: pinned first, then the newest change first. */
const LIST_ORDER: PageOrder<Note> = {
  keys: [
    { property: 'pinned', kind: 'flag' },
    { property: 'updatedAt', kind: 'time' },
    { property: 'id', kind: 'uuid' },
  ],
  direction: 'DESC',
};

/** What note.* events carry: ids, the title, the version, the names of changed fields; never the body. */
const eventData = (
  n: Pick<Note, 'id' | 'title' | 'version' | 'folderId'>,
  extra: { changed?: string[]; purge_at?: string; reason?: 'user_deleted' | 'purged' } = {},
) => ({
  note_id: n.id,
  title: n.title,
  version: n.version,
  folder_id: n.folderId,
  ...extra,
});

/** Code points, counted without building an array for the common short text. */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Given tags, lower-cased and checked: a tag that breaks the rule is a validation_error. */
export function checkGivenTags(tags: string[]): string[] {
  const out = new Set<string>();
  for (const raw of tags) {
    const tag = raw.trim().toLowerCase();
    if (!TAG_PATTERN.test(tag) || tag.length > MAX_TAG_LENGTH)
      throw validationError({
        tags: [`"${raw.slice(0, 60)}" is not a tag: 1–${MAX_TAG_LENGTH} characters of a-z 0-9 _ - and / between parts`],
      });
    out.add(tag);
  }
  if (out.size > MAX_TAGS) throw validationError({ tags: [`at most ${MAX_TAGS} tags`] });
  return [...out];
}

/** The union of the given tags and the body's hashtags, at most 50. */
export function tagUnion(given: string[], body: string): string[] {
  const tags = [...new Set([...given, ...hashtags(body)])];
  if (tags.length > MAX_TAGS)
    throw validationError({ tags: [`a note has at most ${MAX_TAGS} tags, given and #hashtags together`] });
  return tags;
}

function checkBody(body: string): string {
  if (codePoints(body) > MAX_BODY_CHARACTERS)
    throw validationError({ body: [`must be at most ${MAX_BODY_CHARACTERS.toLocaleString('en')} characters`] });
  return body;
}

/** The stored title: trimmed, at most 200 characters; empty → the body's first line. */
function titleOf(title: string | null | undefined, body: string): string {
  const trimmed = (title ?? '').trim();
  if (codePoints(trimmed) > MAX_TITLE_LENGTH)
    throw validationError({ title: [`must be at most ${MAX_TITLE_LENGTH} characters`] });
  return trimmed || titleFromBody(body);
}

/** Rewrites a note's derived rows (tags; links when the body changed). */
export async function writeTags(m: EntityManager, note: Pick<Note, 'id' | 'ownerId' | 'tags'>, fresh: boolean) {
  if (!fresh) await m.delete(NoteTag, { noteId: note.id });
  if (note.tags.length)
    await m.insert(
      NoteTag,
      note.tags.map((tag) => ({ noteId: note.id, tag, ownerId: note.ownerId })),
    );
}

async function writeLinks(m: EntityManager, note: Pick<Note, 'id' | 'ownerId' | 'body'>, fresh: boolean) {
  if (!fresh) await m.delete(NoteLink, { sourceId: note.id });
  const keys = wikiLinks(note.body).filter((k) => k !== idLinkKey(note.id));
  for (let i = 0; i < keys.length; i += 500)
    await m.insert(
      NoteLink,
      keys.slice(i, i + 500).map((targetKey) => ({ sourceId: note.id, targetKey, ownerId: note.ownerId })),
    );
}

/**
 * A tag or one nested in it, as one index range over `t.tag`: from the tag up to the tag + '0'
 * ('0' follows '/'), less the tags that only share its start (`project-x`, `project.x`).
 */
export const TAG_RANGE = 't.tag >= ? AND t.tag < ? AND (t.tag = ? OR t.tag > ?)';
export const tagRange = (tag: string) => [tag, `${tag}0`, tag, `${tag}/`];

/** At most this many notes with a tag: the listing starts from them instead of the owner's notes in order. */
const FEW_TAGGED = 500;

/** What a search's results depend on: its cursor is bound to it (lib/paging.ts). */
const searchQuery = (ownerId: string, filter: NoteFilter) => [
  ownerId,
  filter.q,
  filter.folderId,
  filter.tag,
  filter.archived,
  filter.pinned,
];
const badCursor = () => validationError({ cursor: ['is not a cursor this service handed out for this query'] });

export class NoteService {
  /** Told after a commit that put a note in the trash (the retention purge's timer). */
  onTrashed?: (deletedAt: Date) => void;
  /** The columns a listing selects (every one but NOT_LISTED), read once from the entity's metadata. */
  private listed?: string[];

  constructor(
    private readonly dataSource: DataSource,
    private readonly limits: NoteLimits,
  ) {}

  async create(ownerId: string, input: NoteInput): Promise<Note> {
    const body = checkBody(input.body ?? '');
    const givenTags = checkGivenTags(input.tags ?? []);
    const title = titleOf(input.title, body);
    const now = new Date();
    const note = this.dataSource.manager.create(Note, {
      id: uuidv7(),
      ownerId,
      title,
      titleKey: titleKey(title),
      body,
      excerpt: excerptOf(body),
      folderId: input.folderId ?? null,
      givenTags,
      tags: tagUnion(givenTags, body),
      pinned: false,
      ...plainFields(this.dataSource, input),
      archived: false,
      archivedAt: null,
      version: 1,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
      searchId: null,
    });
    await ensureOwnerRow(this.dataSource, ownerId);
    return this.write(async (m) => {
      const max = this.limits.notesPerUser;
      await takeSlots(
        m,
        ownerId,
        { limit: NOTES_CAP, max, what: 'You have the most notes allowed; delete some to write more.' },
        1,
      );
      if (note.folderId) await this.checkFolder(m, ownerId, note.folderId);
      // SQLite: its FTS row first (the note keeps its rowid); MySQL: its words once the row is there.
      if (isSqlite(this.dataSource)) note.searchId = await indexNote(m, note);
      await m.insert(Note, note);
      if (!isSqlite(this.dataSource)) await indexNote(m, note);
      await writeTags(m, note, true);
      await writeLinks(m, note, true);
      await publish(m, NoteCreated, { userId: ownerId, resourceId: note.id, data: eventData(note) });
      return note;
    });
  }

  /** Another user's note is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<Note> {
    const note = await this.dataSource.manager.findOneBy(Note, { id, ownerId, deletedAt: IsNull() });
    if (!note) throw new AppError('not_found', 'No such note.');
    return note;
  }

  /** The note, or null when the caller may not see it (federation references). */
  find(ownerId: string, id: string): Promise<Note | null> {
    if (!isUuid(id)) return Promise.resolve(null);
    return this.dataSource.manager.findOneBy(Note, { id, ownerId, deletedAt: IsNull() });
  }

  private async checkFolder(m: EntityManager, ownerId: string, folderId: string): Promise<void> {
    // The owner's row is locked first, so a folder found here is not deleted before this commits.
    await lockOwner(m, ownerId);
    if (!(await m.existsBy(NoteFolder, { id: folderId, ownerId })))
      throw new AppError('not_found', 'No such folder.', { folderId: ['is not one of your folders'] });
  }

  async update(ownerId: string, id: string, version: number, changes: NoteInput): Promise<Note> {
    const body = changes.body === undefined || changes.body === null ? undefined : checkBody(changes.body);
    const given = changes.tags === undefined || changes.tags === null ? undefined : checkGivenTags(changes.tags);
    return this.write(async (m) => {
      const before = await this.lockedNote(m, ownerId, id);
      if (before.version !== version) throw staleVersion('note', before.version, version);
      const after: Note = { ...before, version: version + 1, updatedAt: new Date() };
      const changed: string[] = [];
      if (body !== undefined && body !== before.body) {
        Object.assign(after, { body, excerpt: excerptOf(body) });
        changed.push('body');
      }
      if (changes.title !== undefined || changed.includes('body')) {
        // A title left empty follows the body's first line.
        const title = titleOf(changes.title === undefined ? before.title : changes.title, after.body);
        if (title !== before.title) {
          Object.assign(after, { title, titleKey: titleKey(title) });
          changed.push('title');
        }
      }
      if (given !== undefined) after.givenTags = given;
      if (given !== undefined || changed.includes('body')) {
        after.tags = tagUnion(after.givenTags, after.body);
        if (after.tags.join('\n') !== before.tags.join('\n')) changed.push('tags');
      }
      if (changes.folderId !== undefined && changes.folderId !== before.folderId) {
        if (changes.folderId) await this.checkFolder(m, ownerId, changes.folderId);
        after.folderId = changes.folderId;
        changed.push('folder_id');
      }
      for (const [key, value] of Object.entries(plainFields(this.dataSource, changes)) as [keyof Note, unknown][]) {
        if (value === before[key]) continue;
        Object.assign(after, { [key]: value });
        changed.push(snakeCase(key));
      }
      // The statement checks the version too: of concurrent updates at one version, one wins.
      const { id: _id, ownerId: _owner, ...columns } = after;
      if (affectedRows(await m.update(Note, { id, ownerId, version }, columns)) !== 1) {
        await lostAtVersion('note', version, () => m.findOneBy(Note, { id, ownerId }));
      }
      if (changed.includes('body') || changed.includes('title'))
        await indexNote(m, { ...after, searchId: before.searchId });
      if (changed.includes('tags')) await writeTags(m, after, false);
      if (changed.includes('body')) await writeLinks(m, after, false);
      await publish(m, NoteUpdated, {
        userId: ownerId,
        resourceId: id,
        data: eventData(after, { changed }),
      });
      return after;
    });
  }

  /** Archive or unarchive at the expected version. */
  async setArchived(ownerId: string, id: string, version: number, archived: boolean): Promise<Note> {
    return this.write(async (m) => {
      const before = await this.lockedNote(m, ownerId, id);
      if (before.version !== version) throw staleVersion('note', before.version, version);
      const now = new Date();
      const after: Note = {
        ...before,
        archived,
        archivedAt: archived ? now : null,
        version: version + 1,
        updatedAt: now,
      };
      const result = await m.update(
        Note,
        { id, ownerId, version },
        { archived, archivedAt: after.archivedAt, version: after.version, updatedAt: now },
      );
      if (affectedRows(result) !== 1) await lostAtVersion('note', version, () => m.findOneBy(Note, { id, ownerId }));
      await publish(m, archived ? NoteArchived : NoteUnarchived, {
        userId: ownerId,
        resourceId: id,
        data: eventData(after),
      });
      return after;
    });
  }

  /**
   * Like update: of concurrent deletes at the right version exactly one affects the row. The note
   * goes to the trash (a new version, `note.trashed`): gone from lists, search, backlinks, tags and
   * hub nodes, still counted by NOTES_PER_USER; `permanent`: deleted at once (`note.deleted`).
   */
  async delete(ownerId: string, id: string, version: number, permanent = false): Promise<Note> {
    const note = await this.write(async (m) => {
      const note = await this.lockedNote(m, ownerId, id);
      if (note.version !== version) throw staleVersion('note', note.version, version);
      if (permanent) {
        if (affectedRows(await m.delete(Note, { id, ownerId, version })) !== 1)
          await lostAtVersion('note', version, () => m.findOneBy(Note, { id, ownerId, deletedAt: IsNull() }));
        await this.removeRows(m, note);
        return note;
      }
      const deletedAt = new Date();
      const trashed: Note = { ...note, deletedAt, version: version + 1 };
      const result = await m.update(
        Note,
        { id, ownerId, version, deletedAt: IsNull() },
        { deletedAt, version: trashed.version },
      );
      if (affectedRows(result) !== 1)
        await lostAtVersion('note', version, () => m.findOneBy(Note, { id, ownerId, deletedAt: IsNull() }));
      // Its tags leave the counts and the tag filter (the note keeps them in `tags` for a restore);
      // its links stay, unread while it is trashed (backlinks read live notes only).
      await m.delete(NoteTag, { noteId: id });
      await publish(m, NoteTrashed, {
        userId: ownerId,
        resourceId: id,
        data: eventData(trashed, { purge_at: purgeAt(deletedAt, this.limits.trashRetentionDays ?? 30).toISOString() }),
      });
      return trashed;
    });
    if (note.deletedAt) this.onTrashed?.(note.deletedAt);
    return note;
  }

  /** A note's derived rows, its index entry, its slot and its `note.deleted`, once its row is gone. */
  private async removeRows(m: EntityManager, note: Note, extra: Record<string, unknown> = {}): Promise<void> {
    await m.delete(NoteTag, { noteId: note.id });
    await m.delete(NoteLink, { sourceId: note.id });
    await unindexNotes(m, [note.searchId]);
    await releaseSlots(m, note.ownerId, NOTES_CAP, 1);
    await publish(m, NoteDeleted, {
      userId: note.ownerId,
      resourceId: note.id,
      data: eventData(note, extra),
    });
  }

  /** A trashed note of the owner, locked (MySQL), or not_found. */
  private async lockedTrashed(m: EntityManager, ownerId: string, id: string): Promise<Note> {
    const note = await m.findOne(Note, {
      where: { id, ownerId, deletedAt: Not(IsNull()) },
      ...(m.connection.options.type === 'better-sqlite3' ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
    if (!note) throw new AppError('not_found', 'No such note in the trash.');
    return note;
  }

  /**
   * Brings a trashed note back as it was (a new version, `note.restored`): its tags, its folder
   * (the top when the folder went meanwhile), its links and backlinks (they were kept, unread).
   */
  async restore(ownerId: string, id: string): Promise<Note> {
    return this.write(async (m) => {
      const note = await this.lockedTrashed(m, ownerId, id);
      await lockOwner(m, ownerId);
      const folderId =
        note.folderId && (await m.existsBy(NoteFolder, { id: note.folderId, ownerId })) ? note.folderId : null;
      const restored: Note = { ...note, deletedAt: null, folderId, version: note.version + 1, updatedAt: new Date() };
      const result = await m.update(
        Note,
        { id, ownerId, version: note.version, deletedAt: Not(IsNull()) },
        { deletedAt: null, folderId, version: restored.version, updatedAt: restored.updatedAt },
      );
      if (affectedRows(result) !== 1) throw new AppError('not_found', 'No such note in the trash.');
      await writeTags(m, restored, false);
      await publish(m, NoteRestored, {
        userId: ownerId,
        resourceId: id,
        data: eventData(restored, folderId === note.folderId ? {} : { changed: ['folder_id'] }),
      });
      return restored;
    });
  }

  /** Deletes a trashed note for good (`note.deleted`, its slot freed). */
  async purge(ownerId: string, id: string): Promise<Note> {
    return this.write(async (m) => {
      const note = await this.lockedTrashed(m, ownerId, id);
      if (affectedRows(await m.delete(Note, { id, ownerId, deletedAt: Not(IsNull()) })) !== 1)
        throw new AppError('not_found', 'No such note in the trash.');
      await this.removeRows(m, note, { reason: 'purged' });
      return note;
    });
  }

  /** The owner's part of the trash (lib/kit/trash.ts: one order and cursor for every part). */
  trashed(ownerId: string, limit: number, cursor?: string | null): Promise<Page<TrashEntry>> {
    const query = this.dataSource.manager
      .createQueryBuilder(Note, 'n')
      .select(['n.id', 'n.title', 'n.deletedAt'])
      .where('n.ownerId = :ownerId AND n.deletedAt IS NOT NULL', { ownerId });
    return trashPage(
      query,
      limit,
      cursor,
      (n) => ({ type: 'note', title: n.title }),
      this.limits.trashRetentionDays ?? 30,
    );
  }

  /**
   * One batch of a purge job (the retention's, or an emptied trash): at most `ctx.limit` of the
   * owner's notes trashed at or before `before`, each with its `note.deleted`; true while more are left.
   */
  readonly purgeBatch = async (ctx: BatchContext<PurgeParams>): Promise<boolean> => {
    const ownerId = ctx.job.ownerId;
    const before = new Date(ctx.job.params.before);
    const due = await this.dataSource.manager
      .createQueryBuilder(Note, 'n')
      .select(['n.id', 'n.ownerId', 'n.title', 'n.version', 'n.folderId', 'n.searchId'])
      .where('n.ownerId = :ownerId AND n.deletedAt IS NOT NULL AND n.deletedAt <= :before', { ownerId, before })
      .orderBy('n.deletedAt', 'ASC')
      .take(ctx.limit)
      .getMany();
    if (!due.length) return false;
    await ctx.transaction(async (m) => {
      for (const note of due)
        // Only what this transaction removes gets its event (another runner may hold the same rows).
        if (affectedRows(await m.delete(Note, { id: note.id, ownerId, deletedAt: Not(IsNull()) })) === 1)
          await this.removeRows(m, note, { reason: 'purged' });
    });
    return due.length === ctx.limit;
  };

  /** A write transaction, run again when it lost a lock conflict (MySQL). */
  private write<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return retryOnLockConflict(() => inTransaction(this.dataSource, work));
  }

  /**
   * The note, read with a lock on MySQL: a concurrent write at the same version waits here for
   * this one's commit and then reads its version (REPEATABLE READ would show the old snapshot).
   */
  private async lockedNote(m: EntityManager, ownerId: string, id: string): Promise<Note> {
    const note = await m.findOne(Note, {
      where: { id, ownerId, deletedAt: IsNull() },
      ...(m.connection.options.type === 'better-sqlite3' ? {} : { lock: { mode: 'pessimistic_write' as const } }),
    });
    if (!note) throw new AppError('not_found', 'No such note.');
    return note;
  }

  /** The filters as SQL over `n` (the notes row), with `?` placeholders: for the search's raw query. */
  private filterSql(ownerId: string, filter: NoteFilter, taggedIds?: string[]): { where: string; params: unknown[] } {
    // Trashed notes are read by the trash only.
    const where = ['n.owner_id = ?', 'n.deleted_at IS NULL'];
    const params: unknown[] = [ownerId];
    const archived = filter.archived ?? 'false';
    if (archived !== 'all') {
      where.push('n.archived = ?');
      params.push(archived === 'true' ? 1 : 0);
    }
    if (filter.folderId) {
      where.push('n.folder_id = ?');
      params.push(filter.folderId);
    }
    if (filter.pinned !== undefined && filter.pinned !== null) {
      where.push('n.pinned = ?');
      params.push(filter.pinned ? 1 : 0);
    }
    if (taggedIds) {
      where.push(taggedIds.length ? `n.id IN (${taggedIds.map(() => '?').join(', ')})` : '1 = 0');
      params.push(...taggedIds);
    } else if (filter.tag) {
      // The note has the tag or one nested in it: one index range of its (note_id, tag) key.
      where.push(`EXISTS (SELECT 1 FROM note_tags t WHERE t.note_id = n.id AND ${TAG_RANGE})`);
      params.push(...tagRange(filter.tag));
    }
    return { where: where.join(' AND '), params };
  }

  private summaries(): SelectQueryBuilder<Note> {
    this.listed ??= this.dataSource
      .getMetadata(Note)
      .columns.filter((c) => !NOT_LISTED.has(c.propertyName))
      .map((c) => `n.${c.propertyName}`);
    return this.dataSource.manager.createQueryBuilder(Note, 'n').select(this.listed);
  }

  private checkFilter(filter: NoteFilter): void {
    if (filter.tag !== undefined && filter.tag !== null) {
      const tag = filter.tag.trim().toLowerCase();
      if (!TAG_PATTERN.test(tag) || tag.length > MAX_TAG_LENGTH) throw validationError({ tag: ['is not a tag'] });
      filter.tag = tag;
    }
    if (filter.folderId && !isUuid(filter.folderId)) throw validationError({ folder_id: ['must be a UUID'] });
  }

  /**
   * A page of the owner's notes: pinned first, then the newest change first. With `q`, the notes
   * that match, best match first (the cursor then holds an offset bound to the query).
   */
  async list(ownerId: string, filter: NoteFilter, limit: number, cursor?: string | null): Promise<Page<NoteSummary>> {
    this.checkFilter(filter);
    if (filter.q !== undefined && filter.q !== null) return this.search(ownerId, filter, limit, cursor);
    // A tag on few notes: those notes by id, then sorted (walking the owner's notes in order to
    // find a rare tag would read them all). A common tag: the walk finds a page at once.
    let taggedIds: string[] | undefined;
    if (filter.tag) {
      const rows = await this.dataSource.manager.query<{ id: string }[]>(
        `SELECT DISTINCT t.note_id AS id FROM note_tags t WHERE t.owner_id = ? AND ${TAG_RANGE} LIMIT ${FEW_TAGGED + 1}`,
        [ownerId, ...tagRange(filter.tag)],
      );
      if (rows.length <= FEW_TAGGED) taggedIds = rows.map((r) => r.id);
    }
    const { where, params } = this.filterSql(ownerId, filter, taggedIds);
    // TypeORM's named parameters, from the positional ones.
    let i = 0;
    const named: Record<string, unknown> = {};
    const query = this.summaries().where(
      where.replace(/\?/g, () => {
        named[`f${i}`] = params[i];
        return `:f${i++}`;
      }),
      named,
    );
    return pageOf(query, LIST_ORDER, limit, cursor);
  }

  private async search(
    ownerId: string,
    filter: NoteFilter,
    limit: number,
    cursor?: string | null,
  ): Promise<Page<NoteSummary>> {
    const terms = searchTerms(filter.q!, this.limits.searchMaxTerms);
    const query = searchQuery(ownerId, filter);
    const offset = cursor ? decodeSearchCursor(cursor, query) : 0;
    if (offset > 100_000) throw badCursor();
    const ids = await this.limits.expensive.run(ownerId, 'search', () =>
      searchNoteIds(this.limits.reads, this.dataSource, ownerId, terms, this.filterSql(ownerId, filter), {
        limit: limit + 1,
        offset,
        candidates: this.limits.searchCandidates,
      }),
    );
    const page = ids.slice(0, limit);
    // By id alone (the owner is checked on each row): with the owner in the WHERE, SQLite's planner
    // took the owner's index and read every note of the user (36 ms of the event loop at 100,000).
    const rows = page.length
      ? await this.summaries()
          .where({ id: In(page) })
          .getMany()
      : [];
    const byId = new Map(rows.filter((r) => r.ownerId === ownerId).map((r) => [r.id, r]));
    return {
      items: page.map((id) => byId.get(id)).filter((r): r is Note => r !== undefined),
      nextCursor: ids.length > limit ? encodeSearchCursor(query, offset + limit) : null,
    };
  }

  /** The owner's notes that link to this one, by its title (case-insensitive) or its id. */
  async backlinks(ownerId: string, id: string, limit: number, cursor?: string | null): Promise<Page<NoteSummary>> {
    const note = await this.get(ownerId, id);
    const keys = [idLinkKey(note.id), ...(note.titleKey ? [titleLinkKey(note.title)] : [])];
    const query = this.summaries()
      .where('n.ownerId = :ownerId AND n.deletedAt IS NULL', { ownerId })
      .andWhere('n.id <> :self', { self: id })
      .andWhere(
        'n.id IN (SELECT l.source_id FROM note_links l WHERE l.owner_id = :ownerId AND l.target_key IN (:...keys))',
        { keys },
      );
    return pageOf(query, BACKLINK_ORDER, limit, cursor);
  }

  /** Every tag of the owner's notes with its count, by name. */
  async tags(ownerId: string): Promise<{ tag: string; count: number }[]> {
    const rows: { tag: string; count: string | number }[] = await this.dataSource.manager
      .createQueryBuilder(NoteTag, 't')
      .select('t.tag', 'tag')
      .addSelect('COUNT(*)', 'count')
      .where('t.ownerId = :ownerId', { ownerId })
      .groupBy('t.tag')
      .orderBy('t.tag', 'ASC')
      .getRawMany();
    return rows.map((r) => ({ tag: r.tag, count: Number(r.count) }));
  }
}
