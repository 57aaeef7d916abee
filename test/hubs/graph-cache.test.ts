// The kept graphs of hubs (subgraphs/hubs/graph-cache.ts): served only at their exact graph
// version, within HUB_GRAPH_CACHE_BYTES, least recently used out first. No database.
import type { HubEdge } from '../../subgraphs/hubs/entities/hub-edge';
import type { HubNode } from '../../subgraphs/hubs/entities/hub-node';
import { CachedGraph, GraphCache, graphBytes } from '../../subgraphs/hubs/graph-cache';
import { neighborsOf } from '../../subgraphs/hubs/neighbors';

const node = (id: string) => ({ id, text: 'x'.repeat(100) }) as HubNode;
const edge = (id: string, fromNode: string, toNode: string) => ({ id, fromNode, toNode }) as HubEdge;
const graph = (version: number, nodes: HubNode[] = [node('a')], edges: HubEdge[] = []): CachedGraph => ({
  version,
  nodes,
  edges,
  bytes: graphBytes(nodes, edges),
});

describe('GraphCache', () => {
  it('answers a graph only at the version it was kept at', () => {
    const cache = new GraphCache(1e6);
    const g = graph(3);
    cache.put('h', g);
    expect(cache.get('h', 3)).toBe(g);
    expect(cache.get('h', 4)).toBeUndefined();
    // A stale entry is dropped, not kept beside.
    expect(cache.get('h', 3)).toBeUndefined();
    expect(cache.bytes).toBe(0);
  });

  it('stays within its bytes, least recently used out first, and keeps nothing larger than the whole budget', () => {
    const one = graph(1).bytes;
    const cache = new GraphCache(one * 2);
    cache.put('a', graph(1));
    cache.put('b', graph(1));
    cache.get('a', 1); // b is now the least recently used
    cache.put('c', graph(1));
    expect([cache.get('a', 1), cache.get('b', 1), cache.get('c', 1)].map(Boolean)).toEqual([true, false, true]);
    expect(cache.bytes).toBeLessThanOrEqual(one * 2);
    cache.put('big', graph(1, [node('x'), node('y'), node('z')]));
    expect(cache.get('big', 1)).toBeUndefined();
    expect(new GraphCache(0).bytes).toBe(0);
  });

  it('walks neighbours over the adjacency: each level by edge id, within the edge and node budgets', () => {
    const cache = new GraphCache(1e6);
    // a → b, a → c, c → d, e → a
    const nodes = ['a', 'b', 'c', 'd', 'e'].map(node);
    const edges = [edge('1', 'a', 'b'), edge('2', 'a', 'c'), edge('3', 'c', 'd'), edge('4', 'e', 'a')];
    const adj = cache.adjacencyOf(graph(1, nodes, edges));
    const ids = (r: ReturnType<typeof neighborsOf>) => [
      r.nodes.map((n) => n.id),
      r.edges.map((e) => e.id),
      r.truncated,
    ];
    expect(ids(neighborsOf(adj, nodes[0], 2, 'out', 10, 10))).toEqual([['a', 'b', 'c', 'd'], ['1', '2', '3'], false]);
    expect(ids(neighborsOf(adj, nodes[0], 1, 'in', 10, 10))).toEqual([['a', 'e'], ['4'], false]);
    expect(ids(neighborsOf(adj, nodes[0], 3, 'both', 10, 10))).toEqual([
      ['a', 'b', 'c', 'e', 'd'],
      ['1', '2', '4', '3'],
      false,
    ]);
    // Two edges at most: the level's first two by id, then truncated.
    expect(ids(neighborsOf(adj, nodes[0], 3, 'both', 10, 2))).toEqual([['a', 'b', 'c'], ['1', '2'], true]);
    expect(ids(neighborsOf(adj, nodes[0], 3, 'both', 2, 10))[2]).toBe(true);
  });
});
