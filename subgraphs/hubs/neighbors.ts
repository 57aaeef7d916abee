// Neighbours of a node: breadth-first over the hub's graph as kept in memory (graph-cache.ts),
// level by level over each node's edges out and in, no statement and no row hydrated per request
// (issue 44: the levels' SQL and their 500-row answers cost 60–85 ms of the event loop at depth 3).
// The answer holds at most HUB_NEIGHBORS_MAX_NODES nodes, nearest first, and follows at most
// HUB_NEIGHBORS_MAX_EDGES edges over all its levels (depth × fan-out), each level's edges taken in
// id order as the SQL did, and says when it stopped at either.
import type { HubEdge } from './entities/hub-edge';
import type { HubNode } from './entities/hub-node';
import type { Adjacency } from './graph-cache';
import type { DIRECTIONS } from './hub-rules';

export type Direction = (typeof DIRECTIONS)[number];

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

/** The edges leaving (`out`), entering (`in`) or touching (`both`) any node of the frontier, once each, by id. */
function edgesAround(graph: Adjacency, frontier: string[], direction: Direction): HubEdge[] {
  // Positions in graph.edges, which is in id order: marked in a byte array, sorted as numbers.
  const seen = new Uint8Array(graph.edges.length);
  const positions: number[] = [];
  let lists = 0;
  const take = (list: number[] | undefined) => {
    if (!list) return;
    lists++;
    for (const p of list)
      if (!seen[p]) {
        seen[p] = 1;
        positions.push(p);
      }
  };
  for (const id of frontier) {
    if (direction !== 'in') take(graph.out.get(id));
    if (direction !== 'out') take(graph.in.get(id));
  }
  // One list is ascending already; several are put in order by a numeric sort.
  const ordered = lists > 1 ? Uint32Array.from(positions).sort() : positions;
  return Array.from(ordered, (p) => graph.edges[p]);
}

export function neighborsOf(
  graph: Adjacency,
  start: HubNode,
  depth: number,
  direction: Direction,
  maxNodes: number,
  maxEdges: number,
): Neighborhood {
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
    const edges = edgesAround(graph, frontier, direction);
    if (edges.length > edgesLeft) {
      truncated = true;
      edges.length = edgesLeft;
    }
    edgesLeft -= edges.length;
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
  return {
    nodes: [...depths.keys()].map((id) => graph.nodeById.get(id)).filter((n): n is HubNode => n !== undefined),
    edges: [...followed.values()],
    depths,
    truncated,
  };
}
