// The facade's route table: the routes, named schemas and tags of every module the entry point
// hands it (each module declares its own; subgraphs/index.ts `facadeRoutes`), joined in order, with the facade's own schemas.
import type { ModuleRoutes, RouteSpec } from './route-spec';
import { FACADE_SCHEMAS, JsonSchema } from './schemas';

export interface RouteTable {
  routes: RouteSpec[];
  /** Every named schema: the facade's own, then each module's. */
  schemas: Record<string, JsonSchema>;
  tags: { name: string; description?: string }[];
}

/** Joins the modules' routes; a name used twice (an operationId, a method and path, a schema) is a mistake found at start. */
export function routeTable(modules: ModuleRoutes[]): RouteTable {
  const table: RouteTable = { routes: [], schemas: { ...FACADE_SCHEMAS }, tags: [] };
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
  }
  return table;
}
