import { Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * A synthesis worker that is alive: each one writes its row every SYNTHESIS_HEARTBEAT_SECONDS
 * and deletes it when it stops. Readiness counts the rows written lately, so a dead worker
 * (killed, host gone) stops counting by itself.
 */
@Entity('synthesis_workers')
export class SynthesisWorkerBeat {
  @PrimaryColumn({ type: 'varchar', length: 100 })
  id!: string;

  @Column({ name: 'heartbeat_at', type: 'datetime', precision: 3 })
  heartbeatAt!: Date;

  @Column({ name: 'started_at', type: 'datetime', precision: 3 })
  startedAt!: Date;

  /** Jobs it renders at once. */
  @Column({ type: 'integer' })
  concurrency!: number;
}
