// Each user's learned classifier (classifier.ts), ready to predict: read from vault_classifiers
// and kept per process while its stored version holds (at most 100 users' models).
import type { DataSource } from 'typeorm';
import { Predictor, StoredModel } from './classifier';
import { VaultClassifier } from './entities/vault-classifier';

const KEPT = 100;

export class Predictors {
  private readonly kept = new Map<string, { version: number; predictor: Predictor }>();

  constructor(private readonly dataSource: DataSource) {}

  /** The user's model ready to predict, or null; cached per process while its stored version holds. */
  async predictor(ownerId: string): Promise<Predictor | null> {
    const { manager } = this.dataSource;
    const head = await manager.findOne(VaultClassifier, {
      select: { ownerId: true, version: true },
      where: { ownerId },
    });
    if (!head) return null;
    const cached = this.kept.get(ownerId);
    if (cached?.version === head.version) return cached.predictor;
    const row = await manager.findOneBy(VaultClassifier, { ownerId });
    if (!row) return null;
    const stored: StoredModel = {
      model: row.model,
      labelCounts: JSON.parse(row.labelCounts) as Record<string, number>,
    };
    const predictor = new Predictor(stored, 5);
    if (this.kept.size >= KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(ownerId, { version: row.version, predictor });
    return predictor;
  }
}
