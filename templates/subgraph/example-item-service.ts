// The examples module's rules. Every change and its event are written in one transaction (the
// outbox, lib/outbox.ts); updates and deletes name the version they expect (optimistic locking,
// lib/kit/versioned.ts); a user keeps at most so many example items (the kit's guarded counter,
// lib/kit/user-caps.ts, taken in the create's transaction and released by the delete).
import { v7 as uuidv7 } from 'uuid';
import { In, type DataSource } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { Cap, UserCap, UserCaps } from '../../lib/kit/user-caps';
import type { UserCascadeBatch } from '../../lib/kit/user-cascade';
import { lostAtVersion, updateAtVersion } from '../../lib/kit/versioned';
import { snakeKeys } from '../../lib/naming';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import { ExampleItem } from './entities/example-item';
import { ExampleItemCreated, ExampleItemDeleted, ExampleItemUpdated } from './events';
import { PER_USER } from './settings';

/** Oldest first: ids are UUIDv7, in creation order. */
const ORDER: PageOrder<ExampleItem> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'ASC' };

/** What a client sets: every column but those the service keeps (so a new column needs no change here). */
export type ExampleItemInput = Omit<ExampleItem, 'id' | 'ownerId' | 'version' | 'createdAt' | 'updatedAt'>;

/** The values given (undefined: not given), strings trimmed as stored. */
const given = <T extends object>(fields: T): Partial<T> =>
  Object.fromEntries(
    Object.entries(fields)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => [key, typeof value === 'string' ? value.trim() : value]),
  ) as Partial<T>;

/** What example_item.* events carry: the example item without its owner (spelled as events spell them: lib/naming.ts). */
const eventData = ({ ownerId: _owner, id, version, ...item }: ExampleItem) => ({
  ...snakeKeys<unknown>({ exampleItemId: id, ...item }),
  example_item_id: id,
  version,
});

export class ExampleItemService {
  private readonly caps: UserCaps;
  private readonly cap: Cap;

  constructor(
    private readonly dataSource: DataSource,
    /** How many example items one user may keep (its setting, PER_USER); a create past it is 409 `conflict`, details { limit, max, count }. */
    perUser: number,
  ) {
    this.caps = new UserCaps(dataSource);
    this.cap = { limit: PER_USER, max: perUser, what: 'You have the most example items allowed.' };
  }

  async create(ownerId: string, fields: ExampleItemInput): Promise<ExampleItem> {
    const now = new Date();
    const item = this.dataSource.manager.create(ExampleItem, {
      ...given(fields),
      id: uuidv7(),
      ownerId,
      version: 1,
      createdAt: now,
      updatedAt: now,
    });
    await this.caps.prepare(ownerId, [this.cap.limit]);
    return inTransaction(this.dataSource, async (m) => {
      await this.caps.take(m, ownerId, { cap: this.cap });
      await m.insert(ExampleItem, item);
      await publish(m, ExampleItemCreated, {
        userId: ownerId,
        resourceId: item.id,
        data: eventData(item),
      });
      return item;
    });
  }

  /** Another user's example item is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<ExampleItem> {
    const item = await this.dataSource.manager.findOneBy(ExampleItem, { id, ownerId });
    if (!item) throw new AppError('not_found', 'No such example item.');
    return item;
  }

  list(ownerId: string, limit: number, cursor?: string | null): Promise<Page<ExampleItem>> {
    const query = this.dataSource.manager
      .createQueryBuilder(ExampleItem, 'item')
      .where('item.ownerId = :ownerId', { ownerId });
    return pageOf(query, ORDER, limit, cursor);
  }

  /** The statement checks the version (`UPDATE … WHERE id AND owner AND version`): of concurrent updates at one version, one wins. */
  async update(ownerId: string, id: string, version: number, changes: Partial<ExampleItemInput>): Promise<ExampleItem> {
    const updated = await inTransaction(this.dataSource, async (m) => {
      if (
        !(await updateAtVersion(m, ExampleItem, { id, ownerId }, version, { ...given(changes), updatedAt: new Date() }))
      )
        return null;
      const item = await m.findOneByOrFail(ExampleItem, { id, ownerId });
      await publish(m, ExampleItemUpdated, { userId: ownerId, resourceId: id, data: eventData(item) });
      return item;
    });
    return updated ?? lostAtVersion('example item', version, () => this.get(ownerId, id));
  }

  /** Like update: of concurrent deletes at the right version exactly one affects the row. */
  async delete(ownerId: string, id: string, version: number): Promise<ExampleItem> {
    const item = await this.get(ownerId, id);
    const won =
      item.version === version &&
      (await inTransaction(this.dataSource, async (m) => {
        if (affectedRows(await m.delete(ExampleItem, { id, ownerId, version })) !== 1) return false;
        await this.caps.release(m, ownerId, this.cap.limit);
        await publish(m, ExampleItemDeleted, { userId: ownerId, resourceId: id, data: eventData(item) });
        return true;
      }));
    return won ? item : lostAtVersion('example item', version, () => this.get(ownerId, id));
  }

  /**
   * One batch of a deleted user's example items (the kit's cascade, lib/kit/user-cascade.ts): at
   * most `ctx.limit` rows in one transaction, each with its event; false when none is left.
   */
  readonly deleteOwnerBatch: UserCascadeBatch = async (ctx) => {
    const ownerId = ctx.job.ownerId;
    const ids = await this.dataSource.manager.find(ExampleItem, {
      select: { id: true },
      where: { ownerId },
      take: ctx.limit,
    });
    if (!ids.length) {
      // The last batch: the user's cap counters go, once their example items are gone.
      if (await this.dataSource.manager.existsBy(UserCap, { ownerId }))
        await ctx.transaction((m) => this.caps.forget(m, ownerId));
      return false;
    }
    await ctx.transaction(async (m, removed) => {
      // Read again inside the batch: only what this transaction deletes gets its event.
      const items = await m.findBy(ExampleItem, { id: In(ids.map((i) => i.id)), ownerId });
      if (!items.length) return;
      await m.delete(ExampleItem, { id: In(items.map((i) => i.id)) });
      for (const item of items)
        await publish(m, ExampleItemDeleted, {
          userId: ownerId,
          resourceId: item.id,
          data: { ...eventData(item), reason: 'user_deleted' as const },
        });
      removed('example_items', items.length);
      await this.caps.release(m, ownerId, this.cap.limit, items.length);
    });
    return true;
  };
}
