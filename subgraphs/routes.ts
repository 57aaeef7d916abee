// The REST routes of this build, one entry per module, in the order the facade serves and
// documents them. Only entry points (bin/) read this list and hand it to the facade, as they hand
// the gateway its subgraphs (subgraphs/index.ts). Each module declares its routes beside its
// resolvers, in subgraphs/<name>/routes.ts: declarations only, no entity or service, so the facade
// process loads none of a module's code. `npm run new-subgraph` adds a module's line.
import { eventsRoutes, eventsSchemas } from '../gateway/events-routes';
import type { ModuleRoutes } from '../rest-facade/route-spec';
import { authRoutes, authSchemas } from './auth/routes';
import { hubsRoutes } from './hubs/routes';
import { integrationsRoutes } from './integrations/routes';
import { notesRoutes } from './notes/routes';
import { ttsRoutes, ttsSchemas } from './tts/routes';
import { vaultRoutes } from './vault/routes';

export const facadeRoutes: ModuleRoutes[] = [
  {
    routes: authRoutes,
    schemas: authSchemas,
    tags: [{ name: 'Auth' }, { name: 'Admin', description: 'For the `admin` role; others get 403 `forbidden`.' }],
  },
  { routes: ttsRoutes, schemas: ttsSchemas, tags: [{ name: 'TTS' }] },
  // The gateway's event stream (not a subgraph: gateway/events-schema.ts).
  { routes: eventsRoutes, schemas: eventsSchemas, tags: [{ name: 'Events' }] },
  { routes: hubsRoutes },
  { routes: integrationsRoutes },
  { routes: notesRoutes },
  { routes: vaultRoutes },
];
