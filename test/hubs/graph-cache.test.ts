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

  it('keeps answers of selections with a kept graph: once per selection, at most maxLists, in the same bytes', async () => {
    const g = graph(1);
    const cache = new GraphCache(g.bytes * 4, 2);
    cache.put('h', g);
    let builds = 0;
    const answer = (bytes: number) => () => (builds++, Promise.resolve({ items: [], bytes }));
    const first = cache.plainList('h', g, 'nodes a', answer(g.bytes));
    // Concurrent requests share one build; then it is kept and counted.
    expect(cache.plainList('h', g, 'nodes a', answer(g.bytes))).toBe(first);
    await first;
    expect([builds, cache.bytes]).toEqual([1, g.bytes * 2]);
    await cache.plainList('h', g, 'nodes b', answer(g.bytes));
    await cache.plainList('h', g, 'nodes a', answer(g.bytes)); // a is now the more recently used
    await cache.plainList('h', g, 'edges c', answer(g.bytes)); // a third: b goes
    expect(cache.bytes).toBe(g.bytes * 3);
    await cache.plainList('h', g, 'nodes a', answer(g.bytes));
    await cache.plainList('h', g, 'nodes b', answer(g.bytes));
    expect(builds).toBe(4);
    // Room is made by dropping other graphs; an answer that cannot fit beside its own graph is not kept.
    const roomy = new GraphCache(g.bytes * 3, 8);
    const other = graph(1);
    roomy.put('h', g);
    roomy.put('o', other);
    roomy.get('h', 1);
    await roomy.plainList('h', g, 'x', answer(g.bytes));
    expect([roomy.get('o', 1), roomy.bytes]).toEqual([other, g.bytes * 3]);
    roomy.get('h', 1);
    await roomy.plainList('h', g, 'y', answer(g.bytes));
    expect([roomy.get('o', 1), roomy.bytes]).toEqual([undefined, g.bytes * 3]);
    expect(await roomy.plainList('h', g, 'z', answer(g.bytes * 2))).toEqual({ items: [], bytes: g.bytes * 2 });
    expect(roomy.bytes).toBe(g.bytes * 3);
    await roomy.plainList('h', g, 'z', answer(g.bytes * 2));
    expect(builds).toBe(8);
    // The graph replaced (a new version): its answers go with it, and one for a graph not kept is built each time.
    cache.put('h', graph(2));
    expect(cache.bytes).toBe(graph(2).bytes);
    await cache.plainList('h', g, 'nodes a', answer(1));
    await cache.plainList('h', g, 'nodes a', answer(1));
    expect(builds).toBe(10);
    expect(cache.bytes).toBe(graph(2).bytes);
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
    // Edges that came out of id order: each level is still taken by id.
    const shuffled = cache.adjacencyOf(graph(2, nodes, [edges[3], edges[1], edges[0], edges[2]]));
    expect(ids(neighborsOf(shuffled, nodes[0], 3, 'both', 10, 10))).toEqual(
      ids(neighborsOf(adj, nodes[0], 3, 'both', 10, 10)),
    );
    expect(ids(neighborsOf(shuffled, nodes[0], 3, 'both', 10, 2))).toEqual([['a', 'b', 'c'], ['1', '2'], true]);
  });
});
