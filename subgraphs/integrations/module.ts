// The integrations module (webhooks): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { integrationsEvents } from './events';
import { webhookDeliveries, webhookDeliveryLag, webhookEndpointsDisabled } from './metrics';
import { integrationsRoutes } from './routes';
import { integrationsSettings } from './settings';

export const integrationsModule: ModuleDefinition = {
  name: 'integrations',
  subgraph: async () => (await import('./index')).integrationsSubgraph,
  routes: {
    routes: integrationsRoutes,
    tags: [
      {
        name: 'Webhooks',
        description:
          'Endpoints that receive your events as signed HTTP POSTs (Standard Webhooks), and their deliveries.',
      },
    ],
  },
  metrics: [webhookDeliveries, webhookDeliveryLag, webhookEndpointsDisabled],
  events: integrationsEvents,
  settings: integrationsSettings,
};
