// Removes the nodes and edges of deleted hubs in the background, at most 1,000 rows a
// transaction (contract: operations over many rows). The list of what to remove is durable
// (`hub_deletions`, written with the deletion), so a crash resumes at the next start. It runs
// when this process deletes a hub and once at start: no polling while nothing happens.
import { DataSource, In } from 'typeorm';
import { inTransaction } from '../../lib/database/transactions';
import type { Logger } from '../../lib/logger';
import { HubEdge } from './entities/hub-edge';
import { HubNode } from './entities/hub-node';
import { HubDeletion } from './entities/hub-ref';

export const SWEEP_BATCH = 1000;

export class HubSweeper {
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logger?: Logger,
  ) {}

  /** Starts a sweep, or another right after the current one. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.sweep()
      .catch((err) =>
        this.logger?.warn({ err }, 'removing the rows of deleted hubs failed; retrying at the next deletion or start'),
      )
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once no sweep is running (tests, and stop()). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async sweep(): Promise<void> {
    for (;;) {
      const pending = await this.dataSource.manager.find(HubDeletion, { take: 10 });
      if (!pending.length || this.stopped) return;
      for (const { hubId } of pending) {
        while (!this.stopped && (await this.removeBatch(hubId))) {
          /* the next batch */
        }
      }
    }
  }

  /** One transaction of at most SWEEP_BATCH rows; false once the hub has no rows left (its entry goes too). */
  private removeBatch(hubId: string): Promise<boolean> {
    return inTransaction(this.dataSource, async (m) => {
      for (const entity of [HubEdge, HubNode]) {
        const rows = await m.find(entity, { select: { id: true }, where: { hubId }, take: SWEEP_BATCH });
        if (rows.length) {
          await m.delete(entity, { id: In(rows.map((r) => r.id)) });
          return true;
        }
      }
      await m.delete(HubDeletion, { hubId });
      return false;
    });
  }
}
