// A whole hub's graph, built once per graph version and kept (issue 44): `GET /hubs/{id}`,
// `Hub.graph`, the canvas export and the neighbours' walk all read it instead of 25,000 rows.
//
// The key is the hub's `graph_version`, which every write to its nodes or edges moves in the
// transaction that makes it (HubService.reserve, refs-projection.ts): a graph built from rows
// read after the hub's row at version v is at least as new as v, so keeping it under v never
// serves an older graph than the database held when the request began. A graph whose version
// moved while it was being read (its reads are several statements, with yields between them) is
// answered once and not kept.
//
// Bounded by HUB_GRAPH_CACHE_BYTES (an estimate of what the graph holds), least recently used
// out first. Each process keeps its own: the version makes a stale entry useless, never wrong.
//
// With a kept graph go the answers of typed GraphQL selections of its nodes and edges
// (lib/plain-lists.ts: `hub { nodes { id x y … } }` answered without graphql-js completing 25,000
// objects), at most HUB_GRAPH_SELECTIONS of them, counted in the same bytes.
import type { PlainList } from '../../lib/plain-lists';
import type { HubEdge } from './entities/hub-edge';
import type { HubNode } from './entities/hub-node';

export interface CachedGraph {
  readonly version: number;
  readonly nodes: readonly HubNode[];
  readonly edges: readonly HubEdge[];
  /** Estimated bytes held. */
  readonly bytes: number;
}

export interface Adjacency {
  nodeById: Map<string, HubNode>;
  /** The graph's edges by id (ids are UUIDv7: creation order). */
  edges: readonly HubEdge[];
  /**
   * Each node's edges out and in, as ascending positions in `edges`: a walk sorts and marks numbers,
   * not 36-character ids (issue 41: the walk was a third of a depth-3 answer's time on the event loop).
   */
  out: Map<string, number[]>;
  in: Map<string, number[]>;
}

const NODE_OVERHEAD = 400;
const EDGE_OVERHEAD = 300;

/** An estimate of a graph's heap: its strings (2 bytes a character at most) and per-object overhead. */
export function graphBytes(nodes: readonly HubNode[], edges: readonly HubEdge[]): number {
  let bytes = 0;
  for (const n of nodes)
    bytes += NODE_OVERHEAD + 2 * ((n.text?.length ?? 0) + (n.url?.length ?? 0) + (n.label?.length ?? 0));
  for (const e of edges) bytes += EDGE_OVERHEAD + 2 * (e.label?.length ?? 0);
  return bytes;
}

/** A kept answer of a selection: its bytes once built and counted (0 while building). */
interface KeptList {
  list: Promise<PlainList | undefined>;
  bytes: number;
}

/** A kept graph's answers by selection, least recently used first, and their bytes. */
interface KeptLists {
  byKey: Map<string, KeptList>;
  bytes: number;
}

export class GraphCache {
  private readonly entries = new Map<string, CachedGraph>();
  private readonly adjacency = new WeakMap<CachedGraph, Adjacency>();
  private readonly lists = new WeakMap<CachedGraph, KeptLists>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    /** HUB_GRAPH_SELECTIONS: answers kept per graph. */
    private readonly maxLists = 8,
  ) {}

  /** The hub's graph at exactly `version`, if kept (and now the most recently used). */
  get(hubId: string, version: number): CachedGraph | undefined {
    const entry = this.entries.get(hubId);
    if (!entry) return undefined;
    if (entry.version !== version) {
      this.drop(hubId);
      return undefined;
    }
    this.entries.delete(hubId);
    this.entries.set(hubId, entry);
    return entry;
  }

  /** Keeps a graph unless it alone is over the budget; the least recently used go to make room. */
  put(hubId: string, graph: CachedGraph): void {
    this.drop(hubId);
    if (graph.bytes > this.maxBytes) return;
    while (this.total + graph.bytes > this.maxBytes && this.entries.size) this.drop(this.entries.keys().next().value!);
    this.entries.set(hubId, graph);
    this.total += graph.bytes;
  }

  /** For tests and metrics. */
  get bytes(): number {
    return this.total;
  }

  private drop(hubId: string): void {
    const entry = this.entries.get(hubId);
    if (!entry) return;
    this.entries.delete(hubId);
    this.total -= entry.bytes + (this.lists.get(entry)?.bytes ?? 0);
    this.lists.delete(entry);
  }

  /**
   * The answer of a selection (`key`) of the graph's nodes or edges: kept with the graph, or built
   * by `build` (once for concurrent requests) and kept while the graph is, within the bytes and
   * `maxLists` (the least recently used answer out first). A graph not kept gets its answer built
   * for the request alone.
   */
  plainList(
    hubId: string,
    graph: CachedGraph,
    key: string,
    build: () => Promise<PlainList | undefined>,
  ): Promise<PlainList | undefined> {
    let kept = this.lists.get(graph);
    const found = kept?.byKey.get(key);
    if (found) {
      kept!.byKey.delete(key);
      kept!.byKey.set(key, found);
      return found.list;
    }
    if (this.entries.get(hubId) !== graph || this.maxLists === 0) return build();
    if (!kept) this.lists.set(graph, (kept = { byKey: new Map(), bytes: 0 }));
    const lists = kept;
    const entry: KeptList = { list: build(), bytes: 0 };
    lists.byKey.set(key, entry);
    const forget = () => {
      if (lists.byKey.get(key) === entry) lists.byKey.delete(key);
    };
    entry.list.then((list) => {
      // Counted once built, if the graph and this answer are still kept and there is room.
      if (!list || lists.byKey.get(key) !== entry || !this.grow(hubId, graph, lists, list.bytes)) return forget();
      entry.bytes = list.bytes;
    }, forget);
    while (lists.byKey.size > this.maxLists) {
      const [oldest, old] = lists.byKey.entries().next().value!;
      lists.byKey.delete(oldest);
      lists.bytes -= old.bytes;
      this.total -= old.bytes;
    }
    return entry.list;
  }

  /** Counts `bytes` more for a kept graph, other graphs out (least recently used first) to make room. */
  private grow(hubId: string, graph: CachedGraph, lists: KeptLists, bytes: number): boolean {
    if (this.entries.get(hubId) !== graph || this.lists.get(graph) !== lists) return false;
    if (graph.bytes + lists.bytes + bytes > this.maxBytes) return false;
    lists.bytes += bytes;
    this.total += bytes;
    for (const other of this.entries.keys()) {
      if (this.total <= this.maxBytes) break;
      if (other !== hubId) this.drop(other);
    }
    return true;
  }

  /** The graph's nodes by id and edges by end, built on first use and kept with the graph. */
  adjacencyOf(graph: CachedGraph): Adjacency {
    let adj = this.adjacency.get(graph);
    if (adj) return adj;
    // Edges come in id order (read by id); a graph built otherwise is put in order here.
    const inOrder = graph.edges.every((e, i, all) => i === 0 || all[i - 1].id < e.id);
    const edges = inOrder ? graph.edges : [...graph.edges].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    adj = { nodeById: new Map(), edges, out: new Map(), in: new Map() };
    for (const n of graph.nodes) adj.nodeById.set(n.id, n);
    const add = (map: Map<string, number[]>, key: string, position: number) => {
      const list = map.get(key);
      if (list) list.push(position);
      else map.set(key, [position]);
    };
    // Positions are added in ascending order, so each list is ascending.
    edges.forEach((e, position) => {
      add(adj.out, e.fromNode, position);
      add(adj.in, e.toNode, position);
    });
    this.adjacency.set(graph, adj);
    return adj;
  }
}
