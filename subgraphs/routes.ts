// The REST routes of the modules made by `npm run new-subgraph`, one line each (the generator
// adds it), read by the facade's route table (rest-facade/routes.ts). Each module declares its
// routes beside its resolvers, in subgraphs/<name>/routes.ts; they hold declarations only.
import type { RouteSpec } from '../rest-facade/route-spec';
import { hubsRoutes } from './hubs/routes';
import { integrationsRoutes } from './integrations/routes';
import { notesRoutes } from './notes/routes';
import { vaultRoutes } from './vault/routes';

export const subgraphRoutes: RouteSpec[] = [
  // ...reviewsRoutes,
  ...hubsRoutes,
  ...integrationsRoutes,
  ...notesRoutes,
  ...vaultRoutes,
];
