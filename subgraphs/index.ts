// The modules of this build: the module list. Only entry points (bin/) read it; they hand each
// part to its host: the subgraphs to the gateway's process, the routes to the REST facade.
// `npm run new-subgraph` adds a module's line.
import { eventsRoutes } from '../gateway/events-routes';
import { ModuleDefinition, selectModules } from '../lib/module';
import { installSettings } from '../lib/config';
import { composeScopes, installScopes } from '../lib/scopes';
import type { SubgraphDefinition } from '../lib/subgraph';
import type { ModuleRoutes } from '../rest-facade/route-spec';
import { trashRoutes as trashRoutesOf } from '../rest-facade/trash-routes';
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

/**
 * The scope catalogue (lib/scopes.ts): every module's scopes and public fields, installed as the list
 * is loaded (every entry point loads it) so roles, keys and the pipeline check against it. The
 * contract lists notes', the vault's, hubs' and tts' scopes first; a module not named follows them.
 */
installScopes(composeScopes(modules, ['notes', 'vault', 'hubs', 'tts']));

/** The modules' settings (lib/config.ts): loadConfig() merges their fragments with the host's. */
installSettings(
  modules.flatMap((m) => (m.settings ? [{ module: m.name, settings: m.settings, check: m.checkSettings }] : [])),
);

/** The subgraphs named (all when none), loaded. */
export function selectSubgraphs(names: readonly string[]): Promise<SubgraphDefinition[]> {
  return Promise.all(selectModules(modules, names).map((m) => m.subgraph()));
}

/**
 * The trash's routes (GET and DELETE /trash) over the modules' declared parts, in the contract's
 * order (notes, the vault, hubs); a module not named follows them.
 */
export const trashRoutes: ModuleRoutes = trashRoutesOf(
  orderedBy(modules, ['notes', 'vault', 'hubs']).flatMap((m) => (m.trash ? [m.trash] : [])),
);

/** The REST facade's routes: every module's (the facade serves them all, whichever subgraphs a process runs), the trash's (over the modules' parts) and the event stream's. */
export const facadeRoutes: ModuleRoutes[] = [
  ...modules.flatMap((m) => (m.routes ? [m.routes] : [])),
  trashRoutes,
  eventsRoutes,
];

/** The modules named first, in that order, then the others in the list's. */
function orderedBy(list: readonly ModuleDefinition[], first: readonly string[]): ModuleDefinition[] {
  const rank = (m: ModuleDefinition) => (first.includes(m.name) ? first.indexOf(m.name) : first.length);
  return [...list].sort((a, b) => rank(a) - rank(b));
}
