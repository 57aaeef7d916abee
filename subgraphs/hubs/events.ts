// The hubs module's event types, each with its payload's schema (lib/kit/typed-events.ts): what
// hubs' services publish and what consumers (vault's capture, webhooks) read. Ids, names, counts
// and the names of changed fields, never a node's text.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

/** Why rows went without their owner asking: the owner was deleted (the kit's cascade), or the trash's retention ended. */
const reason = z.enum(['user_deleted', 'purged']).optional();

const hub = z.strictObject({
  hub_id: z.string(),
  name: z.string(),
  version: z.number().int(),
  /** Missing on a deletion by the owner's cascade. */
  node_count: z.number().int().optional(),
  edge_count: z.number().int().optional(),
  /** The fields an update changed. */
  fields: z.array(z.string()).optional(),
  reason,
});

const node = z.strictObject({
  hub_id: z.string(),
  node_id: z.string(),
  type: z.string(),
  version: z.number().int(),
  /** The note, vault item or voice a reference node points at (null: the projection found none). */
  ref_id: z.string().nullable().optional(),
  fields: z.array(z.string()).optional(),
  /** `captured`: a link or text node the vault captured became a vault item node. */
  reason: z.literal('captured').optional(),
});

const edge = z.strictObject({
  hub_id: z.string(),
  edge_id: z.string(),
  from_node: z.string(),
  to_node: z.string(),
});

export const HubCreated = eventType('hub.created', hub);
export const HubUpdated = eventType('hub.updated', hub);
export const HubDeleted = eventType('hub.deleted', hub);
/** Moved to the trash; purged at `purge_at` unless restored. */
export const HubTrashed = eventType('hub.trashed', hub.extend({ purge_at: z.string() }));
export const HubRestored = eventType('hub.restored', hub);
export const HubNodeAdded = eventType('hub.node.added', node);
export const HubNodeUpdated = eventType('hub.node.updated', node);
export const HubNodeRemoved = eventType('hub.node.removed', node.extend({ edges_removed: z.number().int() }));
export const HubEdgeAdded = eventType('hub.edge.added', edge);
export const HubEdgeRemoved = eventType('hub.edge.removed', edge);
/** A quick-added node asks the vault to capture its text or link (the vault answers with vault.item.captured or vault.capture.refused). */
export const HubCaptureRequested = eventType(
  'hub.capture_requested',
  z.strictObject({ hub_id: z.string(), node_id: z.string(), text: z.string().optional(), url: z.string().optional() }),
);

export const hubsEvents = [
  HubCreated,
  HubUpdated,
  HubDeleted,
  HubTrashed,
  HubRestored,
  HubNodeAdded,
  HubNodeUpdated,
  HubNodeRemoved,
  HubEdgeAdded,
  HubEdgeRemoved,
  HubCaptureRequested,
];
