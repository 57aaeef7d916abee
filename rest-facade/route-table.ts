// The facade's route table: the routes, named schemas and tags of every module the entry point
// hands it (each module declares its own; subgraphs/index.ts `facadeRoutes`), joined in order, with the facade's own schemas.
import type { ModuleRoutes, MountedRoute, RouteSpec } from './route-spec';
import { FACADE_SCHEMAS, JsonSchema } from './schemas';

export interface RouteTable {
  routes: RouteSpec[];
  /** Every named schema: the facade's own, then each module's. */
  schemas: Record<string, JsonSchema>;
  tags: { name: string; description?: string }[];
  /** The endpoints beside /api/v1 (MountedRoute), in order. */
  mounted: MountedRoute[];
  /** Their tags, in order, each once. */
  mountedTags: { name: string; description: string }[];
}

/** Joins the modules' routes; a name used twice (an operationId, a method and path, a schema) is a mistake found at start. */
export function routeTable(modules: ModuleRoutes[]): RouteTable {
  const table: RouteTable = { routes: [], schemas: { ...FACADE_SCHEMAS }, tags: [], mounted: [], mountedTags: [] };
  const seen = new Set<string>(Object.keys(FACADE_SCHEMAS).map((name) => `schema ${name}`));
  const once = (key: string) => {
    if (seen.has(key)) throw new Error(`The facade's routes declare ${key} twice.`);
    seen.add(key);
  };
  for (const module of modules) {
    for (const route of module.routes) {
      once(`operationId ${route.operationId}`);
      once(`${route.method.toUpperCase()} ${route.path}`);
      table.routes.push(route);
    }
    for (const [name, schema] of Object.entries(module.schemas ?? {})) {
      once(`schema ${name}`);
      table.schemas[name] = schema;
    }
    for (const tag of module.tags ?? []) {
      once(`tag ${tag.name}`);
      table.tags.push(tag);
    }
    for (const route of module.mounted ?? []) {
      if (route.path === '/api/v1' || route.path.startsWith('/api/v1/'))
        throw new Error(`The mounted route ${route.path} is below /api/v1, which the route table serves.`);
      once(`operationId ${String(route.openapi.operationId)}`);
      once(`mounted ${route.method.toUpperCase()} ${route.path}`);
      table.mounted.push(route);
      if (!table.mountedTags.some((t) => t.name === route.tag.name)) {
        once(`tag ${route.tag.name}`);
        table.mountedTags.push(route.tag);
      }
    }
  }
  return table;
}
