// What a module contributes, declared in one place: subgraphs/<name>/module.ts, listed in the
// module list (subgraphs/index.ts) that only the entry points read. They hand each part to its
// host: the subgraph to the gateway's process, the routes to the REST facade, as Fastify or
// NestJS let a plugin register with the host instead of the host listing it.
//
// A definition is light: declarations only, no entity, resolver or service. Its subgraph is
// loaded when a process runs or composes it, so a facade of its own loads no module's code.
import type { Metric } from 'prom-client';
import type { ModuleRoutes } from '../rest-facade/route-spec';
import type { TrashPart } from '../rest-facade/trash-routes';
import type { SettingsCheck, SettingsFragment } from './config';
import type { EventType } from './kit/typed-events';
import type { DeclaredScope } from './scopes';
import type { SubgraphDefinition } from './subgraph';

export interface ModuleDefinition {
  /** The subgraph's and its database's name: lower-case letters and digits. */
  name: string;
  /** Its subgraph (entities, migrations, resolvers, background work), loaded on demand. */
  subgraph: () => Promise<SubgraphDefinition>;
  /** Its REST routes, the schemas the OpenAPI document names, its tags and its endpoints beside /api/v1 (subgraphs/<name>/routes.ts). */
  routes?: ModuleRoutes;
  /**
   * Its settings: a fragment of the configuration (subgraphs/<name>/settings.ts) that lib/config.ts
   * merges with the host's, each described for docs/configuration.md (`npm run docs:config`).
   */
  settings?: SettingsFragment;
  /** Its rules over several settings (e.g. two that are set together), checked by loadConfig() after each has parsed. */
  checkSettings?: SettingsCheck;
  /** Its metrics, on lib/metrics.ts's registry (subgraphs/<name>/metrics.ts). */
  metrics?: readonly Metric[];
  /**
   * The scopes its fields declare (`@RequiresScopes`), which roles and API keys may grant: the
   * catalogue (lib/scopes.ts composeScopes) is composed from these, and lists no module's own.
   */
  scopes?: readonly DeclaredScope[];
  /**
   * Its event types, each with its payload's schema (subgraphs/<name>/events.ts, lib/kit/typed-events.ts
   * `eventType`); its services publish them with `publish`, consumers read them typed.
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of types of different payloads
  events?: readonly EventType<any>[];
  /**
   * Its part of the trash (CONTRACT.md "Trash"), when its deletes go there: its rows' type and its
   * subgraph's root fields listing and emptying them. GET and DELETE /trash are built from the
   * parts (rest-facade/trash-routes.ts), which name no module.
   */
  trash?: TrashPart;
  /** Its fields anyone may call without a token (`Type.field`, or `Type`), joined to the catalogue's public fields. */
  publicFields?: readonly string[];
}

/** The modules named (all when none), in the list's order; an unknown name is an error naming the known ones. */
export function selectModules(modules: readonly ModuleDefinition[], names: readonly string[]): ModuleDefinition[] {
  if (!names.length) return [...modules];
  return names.map((name) => {
    const found = modules.find((m) => m.name === name);
    if (!found) throw new Error(`Unknown subgraph "${name}"; known: ${modules.map((m) => m.name).join(', ')}`);
    return found;
  });
}
