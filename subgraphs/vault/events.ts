// The vault module's event types, each with its payload's schema (lib/kit/typed-events.ts): what
// the vault's services and enrichment publish and what consumers (hubs' references, webhooks)
// read. Ids, kinds, titles, states and names of changed fields, never an item's text or file.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

/** The hub node a capture came from (hub.capture_requested). */
const source = z.strictObject({ hub_id: z.string(), node_id: z.string() });

const item = z.strictObject({
  vault_item_id: z.string(),
  kind: z.enum(['link', 'text', 'file']),
  title: z.string().nullable(),
  state: z.enum(['pending', 'ready', 'failed']),
  version: z.number().int().optional(),
  /** The fields an update changed. */
  changed: z.array(z.string()).optional(),
  /** Why enrichment failed. */
  error: z.string().nullable().optional(),
  /** The capture came from a hub's node; `duplicate`: the link was in the vault already. */
  source: source.optional(),
  duplicate: z.boolean().optional(),
  /** `purged`: the trash's retention ended (a deletion its owner did not ask for then). */
  reason: z.literal('purged').optional(),
});

const rule = z.strictObject({
  rule_id: z.string(),
  name: z.string(),
  changed: z.array(z.string()).optional(),
});

export const VaultItemCaptured = eventType('vault.item.captured', item);
export const VaultItemReady = eventType('vault.item.ready', item);
export const VaultItemFailed = eventType('vault.item.failed', item);
export const VaultItemUpdated = eventType('vault.item.updated', item);
export const VaultItemClassified = eventType(
  'vault.item.classified',
  item.extend({
    category: z.string().nullable(),
    classification: z.strictObject({
      by: z.enum(['user', 'rule', 'auto']).nullable(),
      rule_id: z.string().nullable(),
      confidence: z.number().nullable(),
    }),
    tags: z.array(z.string()),
  }),
);
export const VaultItemDeleted = eventType('vault.item.deleted', item);
/** Moved to the trash; purged at `purge_at` unless restored. */
export const VaultItemTrashed = eventType('vault.item.trashed', item.extend({ purge_at: z.string() }));
export const VaultItemRestored = eventType('vault.item.restored', item);
/** A capture a hub asked for (hub.capture_requested) was refused: `reason` is the error's code. */
export const VaultCaptureRefused = eventType(
  'vault.capture.refused',
  z.strictObject({ source, reason: z.string(), message: z.string() }),
);
export const VaultRuleCreated = eventType('vault.rule.created', rule);
export const VaultRuleUpdated = eventType('vault.rule.updated', rule);
export const VaultRuleDeleted = eventType('vault.rule.deleted', rule);

export const vaultEvents = [
  VaultItemCaptured,
  VaultItemReady,
  VaultItemFailed,
  VaultItemUpdated,
  VaultItemClassified,
  VaultItemDeleted,
  VaultItemTrashed,
  VaultItemRestored,
  VaultCaptureRefused,
  VaultRuleCreated,
  VaultRuleUpdated,
  VaultRuleDeleted,
];
