// The vault module's metrics, on the process's registry (lib/metrics.ts); listed in the
// module's definition (index.ts `metrics`) and served with the rest at GET /metrics.
import client from 'prom-client';
import { registry, scrapedGauge } from '../../lib/metrics';

export const vaultEnrichments = new client.Counter({
  name: 'vault_enrichments_total',
  help: 'Vault items enriched, by outcome (ready, failed, lost: the lease was lost before the result was recorded).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const vaultEnrichSeconds = new client.Histogram({
  name: 'vault_enrich_seconds',
  help: 'Time one Vault enrichment took (fetch, parse, classify, record), by item kind.',
  labelNames: ['kind'] as const,
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/** Vault items by state, read from the vault database at scrape time. */
export const addVaultItemsSource = scrapedGauge('vault_items', 'Vault items by state.', ['state']);
