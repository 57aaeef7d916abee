// Folders: a tree per owner, at most 10 deep, names unique among siblings. Every change locks the
// owner's row first (owner-row.ts) and then reads the whole tree (at most 1,000 folders), so a
// cycle or a depth past the limit cannot be made by two changes racing.
import { lostAtVersion, staleVersion } from '../../lib/kit/versioned';
import { v7 as uuidv7 } from 'uuid';
import { IsNull } from 'typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction, retryOnLockConflict } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { Note } from './entities/note';
import { NoteFolder } from './entities/note-folder';
import { ensureOwnerRow, FOLDERS_CAP, lockOwner, releaseSlots, takeSlots } from './owner-row';
import { publish } from '../../lib/kit/typed-events';
import { NoteFolderCreated, NoteFolderDeleted, NoteFolderUpdated } from './events';

export const MAX_FOLDER_DEPTH = 10;
export const MAX_FOLDER_NAME = 100;

export interface FolderLimits {
  /** NOTE_FOLDERS_PER_USER */
  foldersPerUser: number;
}

const eventData = (f: NoteFolder, extra: { changed?: string[] } = {}) => ({
  folder_id: f.id,
  name: f.name,
  parent_id: f.parentId,
  version: f.version,
  ...extra,
});

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || [...trimmed].length > MAX_FOLDER_NAME || trimmed.includes('/'))
    throw validationError({ name: [`must be 1 to ${MAX_FOLDER_NAME} characters, without "/"`] });
  return trimmed;
}

const nameKey = (name: string) => name.normalize('NFC').toLowerCase();

/** The owner's folders by id, for walking the tree. */
class Tree {
  readonly byId: Map<string, NoteFolder>;
  constructor(readonly folders: NoteFolder[]) {
    this.byId = new Map(folders.map((f) => [f.id, f]));
  }
  /** 1 for a top folder. */
  depth(id: string): number {
    let d = 0;
    for (
      let f = this.byId.get(id);
      f && d <= this.folders.length;
      f = f.parentId ? this.byId.get(f.parentId) : undefined
    )
      d++;
    return d;
  }
  /** Whether `id` is `ancestor` or below it. */
  within(id: string, ancestor: string): boolean {
    for (let f = this.byId.get(id), n = 0; f && n <= this.folders.length; n++) {
      if (f.id === ancestor) return true;
      f = f.parentId ? this.byId.get(f.parentId) : undefined;
    }
    return false;
  }
  /** Levels from `id` down to its deepest descendant: 1 for a leaf. */
  height(id: string): number {
    const children = this.folders.filter((f) => f.parentId === id);
    return 1 + Math.max(0, ...children.map((c) => this.height(c.id)));
  }
  path(id: string): string {
    const names: string[] = [];
    for (
      let f = this.byId.get(id);
      f && names.length <= this.folders.length;
      f = f.parentId ? this.byId.get(f.parentId) : undefined
    )
      names.unshift(f.name);
    return names.join('/');
  }
}

export class FolderService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly limits: FolderLimits,
  ) {}

  /** A write transaction, run again when it lost a lock conflict (MySQL). */
  private write<T>(work: (m: EntityManager) => Promise<T>): Promise<T> {
    return retryOnLockConflict(() => inTransaction(this.dataSource, work));
  }

  /** Every folder of the owner with its path and note count, by path. */
  async list(ownerId: string): Promise<NoteFolder[]> {
    const folders = await this.dataSource.manager.find(NoteFolder, { where: { ownerId } });
    const counts: { folderId: string; n: string | number }[] = await this.dataSource.manager
      .createQueryBuilder(Note, 'n')
      .select('n.folderId', 'folderId')
      .addSelect('COUNT(*)', 'n')
      .where('n.ownerId = :ownerId AND n.folderId IS NOT NULL AND n.deletedAt IS NULL', { ownerId })
      .groupBy('n.folderId')
      .getRawMany();
    const countOf = new Map(counts.map((c) => [c.folderId, Number(c.n)]));
    const tree = new Tree(folders);
    for (const f of folders) {
      f.path = tree.path(f.id);
      f.noteCount = countOf.get(f.id) ?? 0;
    }
    return folders.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  private async tree(m: EntityManager, ownerId: string): Promise<Tree> {
    return new Tree(await m.find(NoteFolder, { where: { ownerId } }));
  }

  private checkPlace(tree: Tree, folderId: string | null, parentId: string | null, name: string, height = 1) {
    if (parentId && !tree.byId.has(parentId))
      throw new AppError('not_found', 'No such parent folder.', { parentId: ['is not one of your folders'] });
    const depth = (parentId ? tree.depth(parentId) : 0) + height;
    if (depth > MAX_FOLDER_DEPTH)
      throw new AppError('conflict', `Folders nest at most ${MAX_FOLDER_DEPTH} deep.`, {
        limit: MAX_FOLDER_DEPTH,
        reason: 'depth',
      });
    const key = nameKey(name);
    if (tree.folders.some((f) => f.id !== folderId && f.parentId === parentId && f.nameKey === key))
      throw new AppError('conflict', `A folder named "${name}" is already there.`, { reason: 'name_taken' });
  }

  async create(ownerId: string, input: { name: string; parentId?: string | null }): Promise<NoteFolder> {
    const name = checkName(input.name);
    const parentId = input.parentId ?? null;
    await ensureOwnerRow(this.dataSource, ownerId);
    return this.write(async (m) => {
      const max = this.limits.foldersPerUser;
      await takeSlots(m, ownerId, { limit: FOLDERS_CAP, max, what: 'You have the most folders allowed.' }, 1);
      const tree = await this.tree(m, ownerId);
      this.checkPlace(tree, null, parentId, name);
      const now = new Date();
      const folder = m.create(NoteFolder, {
        id: uuidv7(),
        ownerId,
        name,
        nameKey: nameKey(name),
        parentId,
        parentKey: parentId ?? '',
        version: 1,
        createdAt: now,
        updatedAt: now,
      });
      await m.insert(NoteFolder, folder);
      folder.path = parentId ? `${tree.path(parentId)}/${name}` : name;
      folder.noteCount = 0;
      await publish(m, NoteFolderCreated, {
        userId: ownerId,
        resourceId: folder.id,
        data: eventData(folder),
      });
      return folder;
    });
  }

  async update(
    ownerId: string,
    id: string,
    version: number,
    changes: { name?: string | null; parentId?: string | null },
  ): Promise<NoteFolder> {
    const name = changes.name === undefined || changes.name === null ? undefined : checkName(changes.name);
    return this.write(async (m) => {
      await lockOwner(m, ownerId);
      const tree = await this.tree(m, ownerId);
      const before = tree.byId.get(id);
      if (!before) throw new AppError('not_found', 'No such folder.');
      if (before.version !== version) throw staleVersion('folder', before.version, version);
      const parentId = changes.parentId === undefined ? before.parentId : changes.parentId;
      if (parentId && tree.within(parentId, id))
        throw new AppError('conflict', 'A folder cannot move into itself or a folder below it.', { reason: 'cycle' });
      const newName = name ?? before.name;
      this.checkPlace(tree, id, parentId, newName, tree.height(id));
      const changed = [
        ...(newName !== before.name ? ['name'] : []),
        ...(parentId !== before.parentId ? ['parent_id'] : []),
      ];
      const after: NoteFolder = {
        ...before,
        name: newName,
        nameKey: nameKey(newName),
        parentId,
        parentKey: parentId ?? '',
        version: version + 1,
        updatedAt: new Date(),
      };
      const { id: _id, ownerId: _o, path: _p, noteCount: _n, ...columns } = after;
      if (affectedRows(await m.update(NoteFolder, { id, ownerId, version }, columns)) !== 1)
        await lostAtVersion('folder', version, () => m.findOneBy(NoteFolder, { id, ownerId }));
      tree.byId.set(id, after);
      const moved = new Tree([...tree.byId.values()]);
      after.path = moved.path(id);
      after.noteCount = await m.countBy(Note, { ownerId, folderId: id, deletedAt: IsNull() });
      await publish(m, NoteFolderUpdated, {
        userId: ownerId,
        resourceId: id,
        data: eventData(after, { changed }),
      });
      return after;
    });
  }

  /** Only an empty folder goes: one with notes or folders in it is a conflict with both counts. */
  async delete(ownerId: string, id: string, version: number): Promise<NoteFolder> {
    return this.write(async (m) => {
      await lockOwner(m, ownerId);
      const tree = await this.tree(m, ownerId);
      const folder = tree.byId.get(id);
      if (!folder) throw new AppError('not_found', 'No such folder.');
      if (folder.version !== version) throw staleVersion('folder', folder.version, version);
      const noteCount = await m.countBy(Note, { ownerId, folderId: id, deletedAt: IsNull() });
      const folderCount = tree.folders.filter((f) => f.parentId === id).length;
      if (noteCount || folderCount)
        throw new AppError('conflict', 'The folder is not empty: move or delete what is in it first.', {
          reason: 'not_empty',
          noteCount,
          folderCount,
        });
      folder.path = tree.path(id);
      folder.noteCount = 0;
      await m.delete(NoteFolder, { id, ownerId, version });
      await releaseSlots(m, ownerId, FOLDERS_CAP, 1);
      await publish(m, NoteFolderDeleted, { userId: ownerId, resourceId: id, data: eventData(folder) });
      return folder;
    });
  }
}
