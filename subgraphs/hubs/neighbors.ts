// Neighbours of a node: breadth-first over the stored edges, one query per depth level (the
// edges out of, into, or touching the whole frontier at once), never one per node. The answer
// holds at most HUB_NEIGHBORS_MAX_NODES nodes, nearest first, and reads at most
// HUB_NEIGHBORS_MAX_EDGES edges over all its levels (depth × fan-out: a hub of 5,000 nodes and
// 20,000 edges would otherwise be read whole at depth 3), and says when it stopped at either.
import type { HubEdge } from './entities/hub-edge';
import type { HubNode } from './entities/hub-node';
import type { GraphReads } from './graph-reads';

export type Direction = 'out' | 'in' | 'both';

export interface Neighborhood {
  /** The start node first, then by depth. */
  nodes: HubNode[];
  /** The edges followed, between nodes of the answer. */
  edges: HubEdge[];
  /** Depth of each node of `nodes`, by id. */
  depths: Map<string, number>;
  /** True when more nodes were reachable than the answer may hold. */
  truncated: boolean;
}

export async function neighborsOf(
  reads: GraphReads,
  hubId: string,
  start: HubNode,
  depth: number,
  direction: Direction,
  maxNodes: number,
  maxEdges: number,
): Promise<Neighborhood> {
  const depths = new Map<string, number>([[start.id, 0]]);
  const followed = new Map<string, HubEdge>();
  let frontier = [start.id];
  let truncated = false;
  let edgesLeft = maxEdges;
  for (let level = 1; level <= depth && frontier.length; level++) {
    if (edgesLeft <= 0) {
      truncated = true;
      break;
    }
    // One more than the budget: whether this level had more than it may read.
    const edges = await reads.edgesAround(hubId, frontier, direction, edgesLeft + 1);
    if (edges.length > edgesLeft) {
      truncated = true;
      edges.length = edgesLeft;
    }
    edgesLeft -= edges.length;
    // Between levels, the event loop serves others (SQLite's statements run on it).
    await new Promise<void>((resolve) => setImmediate(resolve));
    const inFrontier = new Set(frontier);
    const next: string[] = [];
    for (const edge of edges) {
      const ends: string[] = [];
      if (direction !== 'in' && inFrontier.has(edge.fromNode)) ends.push(edge.toNode);
      if (direction !== 'out' && inFrontier.has(edge.toNode)) ends.push(edge.fromNode);
      for (const end of ends) {
        if (!depths.has(end)) {
          if (depths.size >= maxNodes) {
            truncated = true;
            continue;
          }
          depths.set(end, level);
          next.push(end);
        }
      }
      if (depths.has(edge.fromNode) && depths.has(edge.toNode)) followed.set(edge.id, edge);
    }
    frontier = next;
  }
  const ids = [...depths.keys()];
  const rows = await reads.nodesByIds(hubId, ids);
  const byId = new Map(rows.map((n) => [n.id, n]));
  return {
    nodes: ids.map((id) => byId.get(id)).filter((n): n is HubNode => n !== undefined),
    edges: [...followed.values()],
    depths,
    truncated,
  };
}
