// The vault's limits (its settings, handed in by index.ts) and the per-user caps made from them
// (lib/kit/user-caps.ts): counted in user_caps, taken in the write's transaction.
import type { DataSource, EntityManager } from 'typeorm';
import type { ExpensiveGate } from '../../lib/kit/expensive';
import type { ExpensiveReads } from '../../lib/kit/expensive-reads';
import { Cap, UserCaps } from '../../lib/kit/user-caps';
import { VaultItem, VaultItemKind, VaultItemState } from './entities/vault-item';

export interface VaultLimits {
  maxFileBytes: number;
  textMaxChars: number;
  itemsPerUser: number;
  fileBytesPerUser: number;
  pendingPerUser: number;
  rulesPerUser: number;
  minConfidence: number;
  keywordTags: number;
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

/** The vault's caps, each named by its setting. */
export function vaultCaps(limits: VaultLimits) {
  return {
    items: {
      limit: 'VAULT_ITEMS_PER_USER',
      max: limits.itemsPerUser,
      what: `A vault holds at most ${limits.itemsPerUser} items.`,
    },
    fileBytes: {
      limit: 'VAULT_FILE_BYTES_PER_USER',
      max: limits.fileBytesPerUser,
      what: `A vault holds at most ${limits.fileBytesPerUser} bytes of files.`,
    },
    // What waits for enrichment is a rate, not storage: 429 with Retry-After, as syntheses.
    pending: {
      limit: 'VAULT_PENDING_PER_USER',
      max: limits.pendingPerUser,
      retryAfterSeconds: 5,
      what: `At most ${limits.pendingPerUser} items wait for enrichment at once; try again when some are done.`,
    },
    rules: { limit: 'VAULT_RULES_PER_USER', max: limits.rulesPerUser, what: `At most ${limits.rulesPerUser} rules.` },
  } satisfies Record<string, Cap>;
}

/** The vault's caps, and what an item counts against them. */
export class VaultCaps {
  readonly caps: UserCaps;
  readonly cap: ReturnType<typeof vaultCaps>;

  constructor(dataSource: DataSource, limits: VaultLimits) {
    this.caps = new UserCaps(dataSource);
    this.cap = vaultCaps(limits);
  }

  /** Counts a new item against the caps (the pending one is a rate: 429), in its transaction. */
  async takeForItem(m: EntityManager, item: VaultItem): Promise<void> {
    await this.caps.take(
      m,
      item.ownerId,
      { cap: this.cap.items },
      { cap: this.cap.pending },
      { cap: this.cap.fileBytes, n: item.kind === VaultItemKind.FILE ? (item.sizeBytes ?? 0) : 0 },
    );
  }

  /** Counts out a deleted item: it was `state` when it went. */
  async releaseForItem(m: EntityManager, item: VaultItem): Promise<void> {
    const { items, fileBytes, pending } = this.cap;
    await this.caps.release(
      m,
      item.ownerId,
      fileBytes.limit,
      item.kind === VaultItemKind.FILE ? (item.sizeBytes ?? 0) : 0,
    );
    await this.caps.release(m, item.ownerId, items.limit);
    if (item.state === VaultItemState.PENDING) await this.caps.release(m, item.ownerId, pending.limit);
  }

  /** An item no longer waits for enrichment: its slot of the pending cap is free. */
  releasePending(m: EntityManager, ownerId: string): Promise<void> {
    return this.caps.release(m, ownerId, this.cap.pending.limit);
  }
}
