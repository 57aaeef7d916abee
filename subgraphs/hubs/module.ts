// The hubs module (hubs (JSON Canvas boards)): what it contributes, in one place (lib/module.ts). Listed
// in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { hubsEvents } from './events';
import { hubsRoutes } from './routes';
import { hubsSettings } from './settings';

export const hubsModule: ModuleDefinition = {
  name: 'hubs',
  subgraph: async () => (await import('./index')).hubsSubgraph,
  routes: {
    routes: hubsRoutes,
    tags: [
      {
        name: 'Hubs',
        description:
          'Graphs of nodes and edges (JSON Canvas 1.0) that may point at your notes, vault items and voices.',
      },
    ],
  },
  scopes: ['hubs:read', 'hubs:write'],
  settings: hubsSettings,
  events: hubsEvents,
  trash: { type: 'hub', list: 'trashedHubs', empty: 'emptyHubTrash', plural: 'hubs', titleIs: 'a hub: its name' },
};
