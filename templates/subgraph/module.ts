// The examples module: what it contributes, in one place (lib/module.ts). Listed in
// subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { examplesEvents } from './events';
import { examplesRoutes } from './routes';
import { examplesSettings } from './settings';

export const examplesModule: ModuleDefinition = {
  name: 'examples',
  subgraph: async () => (await import('./index')).examplesSubgraph,
  routes: {
    routes: examplesRoutes,
    tags: [{ name: 'ExampleItem', description: 'Your example items.' }],
  },
  scopes: ['examples:read', 'examples:write'],
  events: examplesEvents,
  settings: examplesSettings,
};
