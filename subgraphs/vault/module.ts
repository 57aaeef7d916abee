// The vault module (the Vault (captured pages and files)): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { vaultEvents } from './events';
import { vaultEnrichSeconds, vaultEnrichments } from './metrics';
import { vaultRoutes } from './routes';
import { vaultSettings } from './settings';

export const vaultModule: ModuleDefinition = {
  name: 'vault',
  subgraph: async () => (await import('./index')).vaultSubgraph,
  routes: {
    routes: vaultRoutes,
    tags: [
      {
        name: 'Vault',
        description: 'Links, texts and files you capture, enriched in the background and classified by your rules.',
      },
    ],
  },
  metrics: [vaultEnrichments, vaultEnrichSeconds],
  scopes: ['vault:read', 'vault:write'],
  events: vaultEvents,
  settings: vaultSettings,
  trash: { type: 'vault_item', list: 'trashedVaultItems', empty: 'emptyVaultTrash', plural: 'vault items' },
};
