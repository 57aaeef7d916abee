// A hub's nodes and edges in REST's names (GET /hubs/{id}, neighbours), and the whole graph's REST
// JSON kept with the kept graph (graph-cache.ts): built once per graph version, a chunk at a time
// with the event loop served between chunks (lib/json-text.ts), so a GET of a 5,000-node hub sends
// bytes instead of mapping 25,000 objects and serialising 6 MiB in one step (~25 ms of the loop).
//
// The text is found by the identity of the kept graph's node array, which Hub.graph hands out as
// it is: in one process the facade's `present` receives that very array and sends the text; over
// HTTP (the distributed layout) the array is a new one, and it maps and serialises as before.
import { buildJsonArray, ItemTexts, JsonText } from '../../lib/json-text';

/** A node of Hub.graph (GraphQL names, dates as ISO text or Date) in REST's names. */
export const restNode = (n: Record<string, unknown>) => ({
  id: n.id,
  hub_id: n.hubId,
  type: n.type,
  x: n.x,
  y: n.y,
  width: n.width,
  height: n.height,
  color: n.color,
  label: n.label,
  text: n.text,
  url: n.url,
  ref_id: n.refId,
  missing: n.missing,
  version: n.version,
  created_at: n.createdAt,
  updated_at: n.updatedAt,
});

export const restEdge = (e: Record<string, unknown>) => ({
  id: e.id,
  from_node: e.fromNode,
  to_node: e.toNode,
  from_side: e.fromSide,
  to_side: e.toSide,
  from_end: e.fromEnd,
  to_end: e.toEnd,
  label: e.label,
  color: e.color,
});

interface RestText {
  nodes: JsonText;
  edges: JsonText;
}

const texts = new WeakMap<readonly unknown[], RestText>();

/** Counts for tests: texts built, and GETs answered from one. */
export const restTextCounts = { built: 0, sent: 0 };

/** Builds and keeps the REST JSON of a graph that will be kept (its arrays never change). */
export async function keepRestText(nodes: readonly object[], edges: readonly object[]): Promise<number> {
  const text = {
    nodes: await buildJsonArray(nodes as Record<string, unknown>[], restNode),
    edges: await buildJsonArray(edges as Record<string, unknown>[], restEdge),
  };
  texts.set(nodes, text);
  restTextCounts.built++;
  return text.nodes.bytes.length + text.edges.bytes.length;
}

/** `{ nodes, edges }` of Hub.graph in REST's names: the kept text when it is the kept graph's array. */
export function restGraph(graph: { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] }): {
  nodes: unknown;
  edges: unknown;
} {
  const text = texts.get(graph.nodes);
  if (text) {
    restTextCounts.sent++;
    return text;
  }
  return { nodes: graph.nodes.map(restNode), edges: graph.edges.map(restEdge) };
}

/**
 * Each kept node's and edge's REST JSON, by the object (graph-cache.ts keeps one object per node
 * and edge of a graph version): a neighbours answer of up to 500 nodes and 1,000 edges splices
 * their texts instead of mapping and serialising every one per request (~3 ms of the loop). Over
 * HTTP the objects are new ones each time: serialised as before, and dropped with them.
 */
const keptNodeTexts: ItemTexts = new WeakMap();
const keptEdgeTexts: ItemTexts = new WeakMap();

/** `{ nodes, edges }` of a neighbourhood in REST's names, as JSON texts to send as they are. */
export async function restNeighborhood(graph: { nodes: Record<string, unknown>[]; edges: Record<string, unknown>[] }) {
  return {
    nodes: await buildJsonArray(graph.nodes, restNode, keptNodeTexts),
    edges: await buildJsonArray(graph.edges, restEdge, keptEdgeTexts),
  };
}
