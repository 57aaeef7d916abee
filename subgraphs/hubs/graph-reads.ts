// The reads of whole graphs (a hub's nodes and edges, a level of the neighbours' search): plain
// parameterised SQL, committed rows only (lib/database/reads.ts), rows turned into plain objects
// here. TypeORM's query building and hydration of 25,000 entities was most of a 5,000-node hub's
// GET in the CPU profile (docs/hubs.md, "Performance").
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DataSource } from 'typeorm';
import { selectCommitted } from '../../lib/database/reads';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';
import { CachedGraph, graphBytes } from './graph-cache';

/**
 * Rows per statement when a whole graph is read: on SQLite each statement runs on the event loop
 * to its end, and 20,000 edges in one took 40–60 ms of it; a page of this many takes a few, and
 * the loop serves others between pages.
 */
export const GRAPH_PAGE_ROWS = 1000;

const NODE_COLUMNS =
  'id, hub_id, type, x, y, width, height, color, label, text, url, ref_id, missing, version, created_at, updated_at';
const EDGE_COLUMNS = 'id, hub_id, from_node, to_node, from_side, to_side, from_end, to_end, label, color, created_at';

type Row = Record<string, unknown>;

/** Dates as TypeORM reads them (SQLite keeps UTC text, MySQL a DATETIME), through the driver. */
function dateReader(dataSource: DataSource, entity: Function, property: string): (value: unknown) => Date {
  const column = dataSource.getMetadata(entity).findColumnWithPropertyName(property)!;
  return (value) => dataSource.driver.prepareHydratedValue(value, column) as Date;
}

const str = (v: unknown) => (v === null || v === undefined ? null : (v as string));

export class GraphReads {
  private readonly nodeDate: (value: unknown) => Date;
  private readonly edgeDate: (value: unknown) => Date;

  constructor(private readonly dataSource: DataSource) {
    this.nodeDate = dateReader(dataSource, HubNode, 'createdAt');
    this.edgeDate = dateReader(dataSource, HubEdge, 'createdAt');
  }

  private node(r: Row): HubNode {
    return {
      id: r.id as string,
      hubId: r.hub_id as string,
      type: r.type as string,
      x: Number(r.x),
      y: Number(r.y),
      width: Number(r.width),
      height: Number(r.height),
      color: str(r.color),
      label: str(r.label),
      text: str(r.text),
      url: str(r.url),
      refId: str(r.ref_id),
      missing: Boolean(Number(r.missing)),
      version: Number(r.version),
      createdAt: this.nodeDate(r.created_at),
      updatedAt: this.nodeDate(r.updated_at),
    };
  }

  private edge(r: Row): HubEdge {
    return {
      id: r.id as string,
      hubId: r.hub_id as string,
      fromNode: r.from_node as string,
      toNode: r.to_node as string,
      fromSide: str(r.from_side),
      toSide: str(r.to_side),
      fromEnd: str(r.from_end),
      toEnd: str(r.to_end),
      label: str(r.label),
      color: str(r.color),
      createdAt: this.edgeDate(r.created_at),
    };
  }

  /**
   * A hub's whole graph, a page of GRAPH_PAGE_ROWS rows at a time in id order, with the version
   * it was read at: the hub's graph_version before the first page (`version`), and whether it
   * was still that after the last (`steady`: no write came between the pages).
   */
  async graphOf(hubId: string): Promise<{ graph: CachedGraph; steady: boolean }> {
    const before = await this.graphVersion(hubId);
    const nodes = await this.pages(hubId, 'hub_nodes', NODE_COLUMNS, (r) => this.node(r));
    const edges = await this.pages(hubId, 'hub_edges', EDGE_COLUMNS, (r) => this.edge(r));
    const after = await this.graphVersion(hubId);
    for (const n of nodes) Object.freeze(n);
    for (const e of edges) Object.freeze(e);
    return {
      graph: { version: before, nodes, edges, bytes: graphBytes(nodes, edges) },
      steady: before === after,
    };
  }

  private async graphVersion(hubId: string): Promise<number> {
    const rows = await selectCommitted<Row>(this.dataSource, 'SELECT graph_version FROM hubs WHERE id = ?', [hubId]);
    return rows.length ? Number(rows[0].graph_version) : -1;
  }

  private async pages<T>(hubId: string, table: string, columns: string, map: (r: Row) => T): Promise<T[]> {
    const out: T[] = [];
    let after = '';
    for (;;) {
      const rows = await selectCommitted<Row>(
        this.dataSource,
        `SELECT ${columns} FROM ${table} WHERE hub_id = ? AND id > ? ORDER BY id LIMIT ${GRAPH_PAGE_ROWS}`,
        [hubId, after],
      );
      for (const r of rows) out.push(map(r));
      if (rows.length < GRAPH_PAGE_ROWS) return out;
      after = rows[rows.length - 1].id as string;
      await nextTurn();
    }
  }
}
