import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A user's learned classifier: the naive Bayes model's counts, as the library exports them. */
@Entity('vault_classifiers')
export class VaultClassifier {
  @PrimaryColumn({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  /** wink-naive-bayes-text-classifier's exportJSON(). */
  @Column({ type: 'text' })
  model!: string;

  /** Items it learned, per category (JSON `{ category: n }`): when it may apply. */
  @Column({ name: 'label_counts', type: 'text' })
  labelCounts!: string;

  /** Every save adds 1: processes reload their cached copy when it moved, and trainers never overwrite each other. */
  @Column({ type: 'integer' })
  version!: number;

  @Column({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
