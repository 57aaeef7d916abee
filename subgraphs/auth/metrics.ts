// The auth module's metrics, on the process's registry (lib/metrics.ts); listed in the
// module's definition (index.ts `metrics`) and served with the rest at GET /metrics.
import client from 'prom-client';
import { registry } from '../../lib/metrics';

export const loginAttempts = new client.Counter({
  name: 'login_attempts_total',
  help: 'Login attempts, by outcome: success, failure (wrong credentials) or limited (refused by the rate limit).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
