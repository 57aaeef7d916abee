// The transfer module: imports (and exports) as background jobs, in one place (lib/module.ts).
// Listed in subgraphs/index.ts; its subgraph (index.ts) is loaded only where it runs or is composed.
import type { ModuleDefinition } from '../../lib/module';
import { ExportJobBody, ImportJobBody, StartExportRequest, transferRoutes } from './routes';
import { transferSettings } from './settings';

export const transferModule: ModuleDefinition = {
  name: 'transfer',
  subgraph: async () => (await import('./index')).transferSubgraph,
  routes: {
    routes: transferRoutes,
    schemas: { ImportJob: ImportJobBody, ExportJob: ExportJobBody, StartExportRequest },
    tags: [
      {
        name: 'Imports',
        description:
          "Bring your data in: bookmark files, Markdown vaults, canvases and this service's own exports (Karakeep next).",
      },
      { name: 'Exports', description: 'Take all your data out: the whole account as one zip.' },
    ],
  },
  scopes: ['transfer:read', 'transfer:write'],
  settings: transferSettings,
};
