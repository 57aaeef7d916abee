// The value rules of hubs, nodes and edges (contract "Hubs", JSON Canvas 1.0), shared by the
// GraphQL arguments, the services and the canvas import, so that each rule is written once.
import { Cap, capReached as kitCapReached } from '../../lib/kit/user-caps';
import { AppError } from '../../lib/errors';

/** The kinds of node a hub holds (the entity's `type`; REST and GraphQL take these). */
export const NODE_TYPES = ['text', 'link', 'note', 'vault_item', 'voice', 'group'] as const;
/** Where an edge meets a node, and how its ends look (JSON Canvas). */
export const SIDES = ['top', 'right', 'bottom', 'left'] as const;
export const ENDS = ['none', 'arrow'] as const;

/** A hub's name (trimmed) and description, in characters. */
export const NAME_MIN = 1;
export const NAME_MAX = 100;
export const DESCRIPTION_MAX = 1000;

export const INT32_MIN = -2147483648;
export const INT32_MAX = 2147483647;
export const SIZE_MIN = 1;
export const SIZE_MAX = 100_000;
export const LABEL_MAX = 200;
export const URL_MAX = 2048;
/** JSON Canvas colours: a preset "1"–"6", or #RRGGBB (its source is the REST schemas' pattern). */
export const COLOR_PATTERN = /^([1-6]|#[0-9A-Fa-f]{6})$/;

/** A neighbours search: how deep, and which way along the edges. */
export const NEIGHBOR_DEPTH_MAX = 3;
export const DIRECTIONS = ['out', 'in', 'both'] as const;

export interface HubLimits {
  hubsPerUser: number;
  maxNodes: number;
  maxEdges: number;
  maxTextBytes: number;
  nodeTextMaxChars: number;
  neighborsMaxNodes: number;
  /** HUB_NEIGHBORS_MAX_EDGES */
  neighborsMaxEdges: number;
  /** TRASH_RETENTION_DAYS (default 30). */
  trashRetentionDays?: number;
  /** Bytes of whole graphs kept in memory (graph-cache.ts). */
  graphCacheBytes: number;
  /** HUB_GRAPH_SELECTIONS: answers of typed selections kept per graph (default 8). */
  graphSelections?: number;
}

/** Characters as JSON Schema counts them (code points). */
export const charCount = (s: string) => [...s].length;

export const isHttpUrl = (value: string): boolean => {
  if (value.length > URL_MAX) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

/** UTF-8 bytes of a node text, as HUB_MAX_TEXT_BYTES counts them. */
export const textBytes = (text: string | null | undefined) => (text ? Buffer.byteLength(text, 'utf8') : 0);

/** The hubs' caps, each named by its setting. HUBS_PER_USER counts on the kit's user_caps; the
 * others on the hub's own row (node_count, edge_count, text_bytes), by the same guarded update. */
export const HUB_CAPS = {
  hubs: { limit: 'HUBS_PER_USER', what: 'You have the most hubs allowed; delete some to make more.' },
  nodes: { limit: 'HUB_MAX_NODES', what: 'The hub would have more nodes than allowed.' },
  edges: { limit: 'HUB_MAX_EDGES', what: 'The hub would have more edges than allowed.' },
  text_bytes: { limit: 'HUB_MAX_TEXT_BYTES', what: "The hub's texts would take more bytes than allowed." },
} as const;

export function hubCap(what: keyof typeof HUB_CAPS, max: number): Cap {
  return { ...HUB_CAPS[what], max };
}

/** The kit's one refusal (409, `details: { limit, max, count }`). */
export function capReached(what: keyof typeof HUB_CAPS, max: number, current: number): AppError {
  return kitCapReached(hubCap(what, max), current);
}
