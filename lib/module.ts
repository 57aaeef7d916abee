// What a module contributes, declared in one place: subgraphs/<name>/module.ts, listed in the
// module list (subgraphs/index.ts) that only the entry points read. They hand each part to its
// host: the subgraph to the gateway's process, the routes to the REST facade, as Fastify or
// NestJS let a plugin register with the host instead of the host listing it.
//
// A definition is light: declarations only, no entity, resolver or service. Its subgraph is
// loaded when a process runs or composes it, so a facade of its own loads no module's code.
import type { Metric } from 'prom-client';
import type { ModuleRoutes } from '../rest-facade/route-spec';
import type { DeclaredScope } from './scopes';
import type { SubgraphDefinition, SubgraphDeps } from './subgraph';

export interface ModuleDefinition {
  /** The subgraph's and its database's name: lower-case letters and digits. */
  name: string;
  /** Its subgraph (entities, migrations, resolvers, background work), loaded on demand. */
  subgraph: () => Promise<SubgraphDefinition>;
  /** Its REST routes, the schemas the OpenAPI document names and its tags (subgraphs/<name>/routes.ts). */
  routes?: ModuleRoutes;
  /** Its metrics, on lib/metrics.ts's registry (subgraphs/<name>/metrics.ts). */
  metrics?: readonly Metric[];
  /**
   * The scopes its fields declare (`@RequiresScopes`), which roles and API keys may grant. Stated
   * here for readers and tests; lib/scopes.ts SCOPES is still the list roles are checked against.
   */
  scopes?: readonly DeclaredScope[];
  /** Its fields anyone may call without a token (`Type.field`, or `Type`); lib/scopes.ts PUBLIC_FIELDS still lists them. */
  publicFields?: readonly string[];
  /**
   * Its per-user caps: each setting that bounds what one user keeps (e.g. NOTES_PER_USER). A slot
   * for the kit's cap helper (lib/, issue 40 item 2), which refuses past it with one shape.
   */
  caps?: readonly ModuleCap[];
  /**
   * What it does when a user is deleted (auth's `user.deleted`): a slot for the kit's batched
   * runner (lib/, issue 40 item 2). Until then each module wires its own consumer in create().
   */
  onUserDeleted?: UserDeletedHandler;
}

/** A per-user cap: the setting that bounds it names it in the refusal's `details.limit`. */
export interface ModuleCap {
  /** The setting, e.g. `NOTES_PER_USER`. */
  limit: string;
  /** What is counted, in words (`notes`). */
  counts: string;
}

/** Deletes (or marks for batched deletion) one deleted user's rows of the module. */
export type UserDeletedHandler = (userId: string, deps: SubgraphDeps) => Promise<void>;

/** The modules named (all when none), in the list's order; an unknown name is an error naming the known ones. */
export function selectModules(modules: readonly ModuleDefinition[], names: readonly string[]): ModuleDefinition[] {
  if (!names.length) return [...modules];
  return names.map((name) => {
    const found = modules.find((m) => m.name === name);
    if (!found) throw new Error(`Unknown subgraph "${name}"; known: ${modules.map((m) => m.name).join(', ')}`);
    return found;
  });
}
