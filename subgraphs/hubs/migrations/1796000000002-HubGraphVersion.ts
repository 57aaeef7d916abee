import { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';
import { columns } from '../../../lib/database/portable';

/**
 * hubs.graph_version: moved by every write to a hub's nodes or edges, the key of the graph kept in
 * memory (graph-cache.ts). hub_edges (hub_id, id): a hub's edges a page at a time in id order.
 */
export class HubGraphVersion1796000000002 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.addColumn('hubs', new TableColumn(c.int('graph_version', { default: 0 })));
    await queryRunner.createIndex(
      'hub_edges',
      new TableIndex({ name: 'IDX_hub_edges_hub_id_id', columnNames: ['hub_id', 'id'] }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropIndex('hub_edges', 'IDX_hub_edges_hub_id_id');
    await queryRunner.dropColumn('hubs', 'graph_version');
  }
}
