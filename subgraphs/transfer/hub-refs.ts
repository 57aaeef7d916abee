// An export's hub nodes that pointed at a note or a vault item, pointed at the new one after an
// import. The export writes each such node as the canvas text the hubs module makes of it, with
// this service's own extension `ref: { type, id }` (JSON Canvas readers ignore fields they do not
// know); importHub makes it a text node. Here, through the hubs module's own mutations, each is
// replaced by a ref node to the item the import made of the old id (same place, size and colour;
// its edges made again), and the text node is removed. A node whose target the export did not
// carry (a voice, a deleted note) stays the text naming it.

/** A GraphQL call as the importing user: its data, or its first error. */
export type HubCall = (
  query: string,
  variables: Record<string, unknown>,
) => Promise<{
  data?: Record<string, unknown> | null;
  error?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } };
}>;

const GRAPH = 'query ImportHubGraph($id: ID!) { hub(id: $id) { graph } }';
const ADD_NODE = `mutation ImportRefNode($hubId: ID!, $type: String!, $x: Int!, $y: Int!, $width: Int!, $height: Int!, $color: String, $refId: ID) {
  addHubNode(hubId: $hubId, type: $type, x: $x, y: $y, width: $width, height: $height, color: $color, refId: $refId) { id }
}`;
const ADD_EDGE = `mutation ImportRefEdge($hubId: ID!, $fromNode: ID!, $toNode: ID!, $fromSide: String, $toSide: String, $fromEnd: String, $toEnd: String, $label: String, $color: String) {
  addHubEdge(hubId: $hubId, fromNode: $fromNode, toNode: $toNode, fromSide: $fromSide, toSide: $toSide, fromEnd: $fromEnd, toEnd: $toEnd, label: $label, color: $color) { id }
}`;
const REMOVE_NODE = `mutation ImportRefRemove($hubId: ID!, $nodeId: ID!, $version: Int!) {
  removeHubNode(hubId: $hubId, nodeId: $nodeId, version: $version) { id }
}`;

/** The kinds of reference an export's node may carry that an import brings back. */
const CARRIED = new Set(['note', 'vault_item']);
/** The waits for a just-made note or item to become referable (the contract: within 2 s). */
const REF_WAITS_MS = [100, 250, 500, 1000, 1500, 2000];
/** All the waiting one hub may do (a target that never becomes referable must not hold the batch). */
const MAX_WAIT_MS = 5000;

interface GraphNode {
  id: string;
  type: string;
  x: number;
  y: number;
  width: number;
  height: number;
  color: string | null;
  version: number;
}
interface GraphEdge {
  id: string;
  fromNode: string;
  toNode: string;
  fromSide: string | null;
  toSide: string | null;
  fromEnd: string | null;
  toEnd: string | null;
  label: string | null;
  color: string | null;
}

/** The old ids the canvas's nodes refer to (this service's `ref` extension), by node index. */
export function canvasRefs(canvas: Record<string, unknown>): { index: number; type: string; id: string }[] {
  const nodes = Array.isArray(canvas.nodes) ? (canvas.nodes as { ref?: { type?: unknown; id?: unknown } }[]) : [];
  return nodes.flatMap((node, index) => {
    const ref = node && typeof node === 'object' ? node.ref : undefined;
    return ref && typeof ref.type === 'string' && typeof ref.id === 'string'
      ? [{ index, type: ref.type, id: ref.id }]
      : [];
  });
}

/**
 * Points the hub's ref nodes at the new ids (`targets`: old id → new id). Answers the problems met
 * (each a sentence for the job's errors); a node it could not point stays a text node.
 */
export async function pointHubRefs(
  call: HubCall,
  hubId: string,
  canvas: Record<string, unknown>,
  targets: Map<string, string>,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
): Promise<string[]> {
  const refs = canvasRefs(canvas);
  if (!refs.length) return [];
  const problems: string[] = [];
  const read = await call(GRAPH, { id: hubId });
  if (read.error) return [`its nodes could not be read to point them: ${read.error.message}`];
  const graph = (read.data!.hub as { graph: { nodes: GraphNode[]; edges: GraphEdge[] } }).graph;
  const canvasNodes = canvas.nodes as { x?: number; y?: number }[];
  const replaced = new Map<string, string>();
  let waited = 0;
  const removed: GraphNode[] = [];
  for (const ref of refs) {
    const target = CARRIED.has(ref.type) ? targets.get(ref.id) : undefined;
    if (!target) {
      problems.push(`a node names a ${ref.type} the file did not bring (${ref.id}): kept as its text`);
      continue;
    }
    // importHub keeps the canvas's order (ids in creation order): the same index, the same place.
    const at = canvasNodes[ref.index];
    const node = graph.nodes[ref.index];
    if (!node || node.type !== 'text' || node.x !== at.x || node.y !== at.y) continue;
    const layout = { x: node.x, y: node.y, width: node.width, height: node.height, color: node.color };
    let added = await call(ADD_NODE, { hubId, type: ref.type, ...layout, refId: target });
    // A note or item made a moment ago is known to the hubs by its event: give it that moment.
    for (const wait of REF_WAITS_MS) {
      if (!(added.error?.extensions?.code === 'validation_error' && added.error.extensions.details?.refId)) break;
      if (waited + wait > MAX_WAIT_MS) break;
      waited += wait;
      await sleep(wait);
      added = await call(ADD_NODE, { hubId, type: ref.type, ...layout, refId: target });
    }
    if (added.error) {
      problems.push(`a node naming ${ref.type} ${target} could not be made: ${added.error.message}`);
      continue;
    }
    replaced.set(node.id, (added.data!.addHubNode as { id: string }).id);
    removed.push(node);
  }
  for (const e of graph.edges) {
    const fromNode = replaced.get(e.fromNode) ?? e.fromNode;
    const toNode = replaced.get(e.toNode) ?? e.toNode;
    if (fromNode === e.fromNode && toNode === e.toNode) continue;
    const { fromSide, toSide, fromEnd, toEnd, label, color } = e;
    const made = await call(ADD_EDGE, { hubId, fromNode, toNode, fromSide, toSide, fromEnd, toEnd, label, color });
    if (made.error) problems.push(`an edge could not be made again: ${made.error.message}`);
  }
  for (const node of removed) {
    const gone = await call(REMOVE_NODE, { hubId, nodeId: node.id, version: node.version });
    if (gone.error) problems.push(`the text node ${node.id} could not be removed: ${gone.error.message}`);
  }
  return problems;
}
