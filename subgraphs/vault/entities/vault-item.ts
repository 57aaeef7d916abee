import { RequiresScopes } from '../../../lib/scopes';
import { Directive, Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { Column, Entity, PrimaryColumn } from 'typeorm';

export enum VaultItemKind {
  LINK = 'link',
  TEXT = 'text',
  FILE = 'file',
}
export enum VaultItemState {
  PENDING = 'pending',
  READY = 'ready',
  FAILED = 'failed',
}
/** Who decided an item's category: the user, a rule, the learned classifier; null: nobody yet. */
export enum ClassifiedBy {
  USER = 'user',
  RULE = 'rule',
  AUTO = 'auto',
}
/** Where a tag came from: given by the user, added by a rule, or extracted from the text. */
export enum TagSource {
  USER = 'user',
  RULE = 'rule',
  AUTO = 'auto',
}

@RequiresScopes('vault:read')
@ObjectType({ description: "One of an item's tags and where it came from." })
export class VaultTag {
  @Field()
  name!: string;

  @Field(() => String, { description: '`user`, `rule` or `auto`.' })
  source!: TagSource;
}

@RequiresScopes('vault:read')
@ObjectType({ description: "What decided the item's category (and its tags from rules)." })
export class VaultClassification {
  @Field(() => String, { nullable: true, description: '`user`, `rule` or `auto`; null: no category decided yet.' })
  by!: ClassifiedBy | null;

  @Field(() => ID, { nullable: true, description: 'The rule that set the category (by: rule).' })
  ruleId?: string | null;

  @Field(() => Float, { nullable: true, description: "The learned classifier's confidence, 0 to 1 (by: auto)." })
  confidence?: number | null;
}

const json = <T>(fallback: T) => ({
  to: (value: T | undefined) => (value === undefined ? undefined : JSON.stringify(value)),
  from: (value: string | null) => (value ? (JSON.parse(value) as T) : fallback),
});
const bool = { to: (v?: boolean) => (v === undefined ? undefined : v ? 1 : 0), from: (v: unknown) => !!Number(v) };
const nullableNumber = { to: (v?: number | null) => v, from: (v: unknown) => (v == null ? null : Number(v)) };

@Directive('@key(fields: "id")')
@ObjectType({ description: 'Something a user captured into the Vault: a link, a text or a file.' })
@Entity('vault_items')
export class VaultItem {
  /** UUIDv7: ordered by creation, so pages follow the id. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID, { description: 'The user who owns it.' })
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field(() => String, { description: '`link`, `text` or `file`.' })
  @Column({ type: 'varchar', length: 8 })
  kind!: VaultItemKind;

  @Field(() => String, { nullable: true, description: 'The URL as given (a link, or the source of a text).' })
  @Column({ type: 'varchar', length: 2048, nullable: true })
  url!: string | null;

  /** sha256 of the normalised URL: the duplicate key of links. */
  @Column({ name: 'url_key', type: 'varchar', length: 64, nullable: true })
  urlKey!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 500, nullable: true })
  title!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'The readable text (up to VAULT_TEXT_MAX_CHARS). Null in pages: read the item for it.',
  })
  @Column({ type: 'text', nullable: true })
  text!: string | null;

  /**
   * What the search index takes: the owner-tagged words of title, text and url
   * (lib/kit/owner-search.ts), written with every change of those. Never read back; on SQLite
   * the index's trigger takes it and empties it.
   */
  @Column({ name: 'search_words', type: 'text', nullable: true, select: false })
  searchWords?: string | null;

  @Field(() => String, { nullable: true, description: 'The first 300 characters of the text (or the description).' })
  @Column({ type: 'varchar', length: 300, nullable: true })
  excerpt!: string | null;

  @Field(() => String, { nullable: true, description: "A page's description (og:description, meta description)." })
  @Column({ type: 'varchar', length: 1000, nullable: true })
  description!: string | null;

  @Field(() => String, { nullable: true, description: "A page's language (its lang attribute or og:locale)." })
  @Column({ type: 'varchar', length: 35, nullable: true })
  language!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ name: 'site_name', type: 'varchar', length: 200, nullable: true })
  siteName!: string | null;

  @Field(() => String, { nullable: true, description: 'A file: sniffed from its bytes; a link: from the answer.' })
  @Column({ name: 'media_type', type: 'varchar', length: 255, nullable: true })
  mediaType!: string | null;

  @Field(() => Float, { nullable: true })
  @Column({ name: 'size_bytes', type: 'bigint', nullable: true, transformer: nullableNumber })
  sizeBytes!: number | null;

  @Field(() => String, { nullable: true, description: "A file's content hash (hex): the duplicate key of files." })
  @Column({ type: 'varchar', length: 64, nullable: true })
  sha256!: string | null;

  @Field(() => String, { nullable: true, description: "A file's name as given." })
  @Column({ name: 'file_name', type: 'varchar', length: 255, nullable: true })
  fileName!: string | null;

  /** The blob store key of a file's bytes. */
  @Column({ name: 'blob_key', type: 'varchar', length: 100, nullable: true })
  blobKey!: string | null;

  /** Null: live. Set: in the trash since then (lib/kit/trash.ts); gone from every read but the trash's. */
  @Column({ name: 'deleted_at', type: 'datetime', precision: 3, nullable: true })
  deletedAt!: Date | null;

  @Field(() => String, { description: '`pending`, then `ready` or `failed`.' })
  @Column({ type: 'varchar', length: 10 })
  state!: VaultItemState;

  @Field(() => String, {
    nullable: true,
    description: 'Why it failed: timeout, too_large, blocked_address, http_404, …',
  })
  @Column({ type: 'varchar', length: 100, nullable: true })
  error!: string | null;

  @Field(() => String, { nullable: true })
  @Column({ type: 'varchar', length: 100, nullable: true })
  category!: string | null;

  @Field(() => [VaultTag])
  @Column({ name: 'tags', type: 'text', transformer: json<VaultTag[]>([]) })
  tags!: VaultTag[];

  @Column({ name: 'classified_by', type: 'varchar', length: 8, nullable: true })
  classifiedBy!: ClassifiedBy | null;

  @Column({ name: 'classified_rule_id', type: 'varchar', length: 36, nullable: true })
  classifiedRuleId!: string | null;

  @Column({ name: 'classified_confidence', type: 'double', nullable: true, transformer: nullableNumber })
  classifiedConfidence!: number | null;

  @Field()
  @Column({ type: 'integer', transformer: bool })
  favorite!: boolean;

  @Field()
  @Column({ type: 'integer', transformer: bool })
  archived!: boolean;

  @Field(() => Int, { description: '1 when captured; every change adds 1. Updates and deletes name it.' })
  @Column({ type: 'integer' })
  version!: number;

  @Field()
  @Column({ name: 'captured_at', type: 'datetime', precision: 3 })
  capturedAt!: Date;

  @Field()
  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  // ---- the enrichment job (leased like syntheses) ----
  @Column({ type: 'integer' })
  attempts!: number;

  @Column({ name: 'worker_id', type: 'varchar', length: 100, nullable: true })
  workerId!: string | null;

  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil!: Date | null;

  // ---- the learned classifier ----
  /** The user set the category and the model has not learned it yet. */
  @Column({ name: 'train_pending', type: 'integer', transformer: bool })
  trainPending!: boolean;

  /** The category the model learned this item as (unlearned when the user changes it). */
  @Column({ name: 'trained_category', type: 'varchar', length: 100, nullable: true })
  trainedCategory!: string | null;

  // ---- the hubs quick-add saga ----
  @Column({ name: 'source_hub_id', type: 'varchar', length: 36, nullable: true })
  sourceHubId!: string | null;

  /** The hub node this item was captured for: unique, so a redelivered request captures once. */
  @Column({ name: 'source_node_id', type: 'varchar', length: 36, nullable: true })
  sourceNodeId!: string | null;
}

export const vaultBlobKey = (id: string) => `${id}.bin`;
