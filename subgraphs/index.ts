// The modules of this build: the module list. Only entry points (bin/) read it; they hand each
// part to its host: the subgraphs to the gateway's process, the routes to the REST facade.
// `npm run new-subgraph` adds a module's line.
import { eventsRoutes } from '../gateway/events-routes';
import { ModuleDefinition, selectModules } from '../lib/module';
import type { SubgraphDefinition } from '../lib/subgraph';
import type { ModuleRoutes } from '../rest-facade/route-spec';
import { authModule } from './auth/module';
import { hubsModule } from './hubs/module';
import { integrationsModule } from './integrations/module';
import { notesModule } from './notes/module';
import { ttsModule } from './tts/module';
import { vaultModule } from './vault/module';
import { transferModule } from './transfer/module';

export const modules: ModuleDefinition[] = [
  authModule,
  ttsModule,
  hubsModule,
  integrationsModule,
  notesModule,
  vaultModule,
  transferModule,
];

/** The subgraphs named (all when none), loaded. */
export function selectSubgraphs(names: readonly string[]): Promise<SubgraphDefinition[]> {
  return Promise.all(selectModules(modules, names).map((m) => m.subgraph()));
}

/** The REST facade's routes: every module's (the facade serves them all, whichever subgraphs a process runs), and the event stream's. */
export const facadeRoutes: ModuleRoutes[] = [...modules.flatMap((m) => (m.routes ? [m.routes] : [])), eventsRoutes];
