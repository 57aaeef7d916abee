// The reads of whole graphs (a hub's nodes and edges, a level of the neighbours' search): plain
// parameterised SQL, committed rows only (lib/database/reads.ts), rows turned into plain objects
// here. TypeORM's query building and hydration of 25,000 entities was most of a 5,000-node hub's
// GET in the CPU profile (docs/hubs.md, "Performance").
import type { DataSource } from 'typeorm';
import { selectCommitted } from '../../lib/database/reads';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';

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

  /** A hub's nodes in creation order (the canvas's z-order). */
  async nodesOf(hubId: string): Promise<HubNode[]> {
    const rows = await selectCommitted<Row>(
      this.dataSource,
      `SELECT ${NODE_COLUMNS} FROM hub_nodes WHERE hub_id = ? ORDER BY id`,
      [hubId],
    );
    return rows.map((r) => this.node(r));
  }

  async edgesOf(hubId: string): Promise<HubEdge[]> {
    const rows = await selectCommitted<Row>(
      this.dataSource,
      `SELECT ${EDGE_COLUMNS} FROM hub_edges WHERE hub_id = ? ORDER BY id`,
      [hubId],
    );
    return rows.map((r) => this.edge(r));
  }

  async nodesByIds(hubId: string, ids: string[]): Promise<HubNode[]> {
    if (!ids.length) return [];
    const rows = await selectCommitted<Row>(
      this.dataSource,
      `SELECT ${NODE_COLUMNS} FROM hub_nodes WHERE hub_id = ? AND id IN (${ids.map(() => '?').join(', ')})`,
      [hubId, ...ids],
    );
    return rows.map((r) => this.node(r));
  }

  /**
   * One level of a breadth-first search: the edges leaving (`out`), entering (`in`) or touching
   * (`both`) any node of the frontier, each found through its index; at most `limit`, by id.
   */
  async edgesAround(
    hubId: string,
    frontier: string[],
    direction: 'out' | 'in' | 'both',
    limit: number,
  ): Promise<HubEdge[]> {
    const marks = frontier.map(() => '?').join(', ');
    const parts: string[] = [];
    const params: unknown[] = [];
    if (direction !== 'in') {
      parts.push(`SELECT ${EDGE_COLUMNS} FROM hub_edges WHERE hub_id = ? AND from_node IN (${marks})`);
      params.push(hubId, ...frontier);
    }
    if (direction !== 'out') {
      parts.push(`SELECT ${EDGE_COLUMNS} FROM hub_edges WHERE hub_id = ? AND to_node IN (${marks})`);
      params.push(hubId, ...frontier);
    }
    // UNION: an edge from the frontier to the frontier is one row.
    const rows = await selectCommitted<Row>(this.dataSource, `${parts.join(' UNION ')} ORDER BY id LIMIT ?`, [
      ...params,
      limit,
    ]);
    return rows.map((r) => this.edge(r));
  }
}
