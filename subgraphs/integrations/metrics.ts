// The integrations module's metrics, on the process's registry (lib/metrics.ts); listed in the
// module's definition (index.ts `metrics`) and served with the rest at GET /metrics.
import client from 'prom-client';
import { registry } from '../../lib/metrics';

export const webhookDeliveries = new client.Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts, by outcome: delivered, failed, timeout, error, blocked_address.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const webhookDeliveryLag = new client.Histogram({
  name: 'webhook_delivery_lag_seconds',
  help: 'Time from an event to its delivery (2xx) to a webhook, retries included.',
  buckets: [0.05, 0.1, 0.2, 0.5, 1, 2.5, 5, 10, 60, 600, 3600, 86_400],
  registers: [registry],
});

export const webhookEndpointsDisabled = new client.Counter({
  name: 'webhook_endpoints_disabled_total',
  help: 'Webhooks disabled because their deliveries failed for the whole retry period.',
  registers: [registry],
});
