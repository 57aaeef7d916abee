import { Directive } from 'type-graphql';
import {
  ConstDirectiveNode,
  GraphQLCompositeType,
  GraphQLField,
  GraphQLSchema,
  isObjectType,
  isInterfaceType,
  Kind,
} from 'graphql';

/**
 * Scopes (the contract's "Admin: roles and scopes"). A field declares what it needs with
 * Federation's own directives, so that its subgraph's SDL and the supergraph show it and any
 * Federation-aware tool can read it. The pipeline's scope step (lib/operation-pipeline/scopes.ts)
 * enforces them in every subgraph.
 *
 * Each module declares its own scopes and public fields in its definition (subgraphs/<name>/module.ts,
 * lib/module.ts); this file names none of them. The module list (subgraphs/index.ts) composes the
 * catalogue (composeScopes) and installs it as it is loaded, before any request: every entry point
 * loads the module list, as it hands the facade its routes.
 */
export type Scope = string;

/** What a declaration may name: `<area>:<action>` (a scope of the catalogue; the module-list test checks it). */
export type DeclaredScope = `${string}:${string}`;

/** The host's own scopes, beside the modules': the event stream (gateway/events-routes.ts). */
export const HOST_SCOPES: readonly Scope[] = ['events:read'];

/**
 * The host's own public fields (Federation's); the modules add theirs. GraphQL: `Type.field`, or
 * `Type` for every field of a type only public fields return; `__`-prefixed fields (introspection,
 * `__typename`) are public too. The federation fields (`_service`, `_entities`) are answered to
 * hop-secret holders in production (lib/hop.ts); the entities they return are checked by their own
 * types. REST routes outside GraphQL (health, JWKS, the OpenAPI document) are public by nature.
 */
export const HOST_PUBLIC_FIELDS: readonly string[] = ['Query._service', 'Query._entities', '_Service'];

/** What a module declares about scopes (lib/module.ts ModuleDefinition). */
export interface ScopeDeclarations {
  name: string;
  scopes?: readonly DeclaredScope[];
  publicFields?: readonly string[];
}

/** The scopes roles and API keys may grant, the built-in roles, and what anyone may call without a token. */
export interface ScopeCatalogue {
  /** Every scope, in the catalogue's order (roles, keys and the OpenAPI document list them so). */
  readonly scopes: readonly Scope[];
  /**
   * The built-in roles: read-only, never stored. `admin` holds every scope, `user` every scope but
   * `admin:*`. A Map, never a plain object: a role named `constructor` or `__proto__` must not find
   * Object.prototype's members (issue 41, finding 9).
   */
  readonly builtInRoles: ReadonlyMap<string, readonly Scope[]>;
  /** The one list of what anyone may call without a token: the host's and every module's. */
  readonly publicFields: ReadonlySet<string>;
}

/**
 * The catalogue of `modules`: the modules' scopes, those named in `first` in that order and then the
 * others in the list's order, then the host's (`events:read`), then `account:*` and `admin:*` (the
 * contract's order); a scope declared twice is listed once. Public fields: the host's and the modules'.
 */
export function composeScopes(modules: readonly ScopeDeclarations[], first: readonly string[] = []): ScopeCatalogue {
  const rank = (m: ScopeDeclarations) => (first.includes(m.name) ? first.indexOf(m.name) : first.length);
  const ordered = modules
    .map((m, i) => ({ m, i }))
    .sort((a, b) => rank(a.m) - rank(b.m) || a.i - b.i)
    .map(({ m }) => m);
  const declared = ordered.flatMap((m) => m.scopes ?? []);
  const band = (s: string) => (s.startsWith('admin:') ? 3 : s.startsWith('account:') ? 2 : 0);
  const all = [...declared.filter((s) => band(s) === 0), ...HOST_SCOPES, ...declared.filter((s) => band(s) === 2)];
  all.push(...declared.filter((s) => band(s) === 3));
  const scopes = [...new Set(all)];
  return {
    scopes,
    builtInRoles: new Map<string, readonly Scope[]>([
      ['admin', scopes],
      ['user', scopes.filter((s) => !s.startsWith('admin:'))],
    ]),
    publicFields: new Set([...HOST_PUBLIC_FIELDS, ...modules.flatMap((m) => m.publicFields ?? [])]),
  };
}

let installed: ScopeCatalogue | undefined;

/** Makes `catalogue` this process's (the module list does, as it is loaded: subgraphs/index.ts). */
export function installScopes(catalogue: ScopeCatalogue): void {
  installed = catalogue;
}

/** This process's catalogue; an error before the module list installed one. */
export function scopeCatalogue(): ScopeCatalogue {
  if (!installed)
    throw new Error('no scope catalogue: the module list (subgraphs/index.ts) installs it; load it first');
  return installed;
}

/** Every scope of the catalogue, in its order. */
export const allScopes = (): readonly Scope[] => scopeCatalogue().scopes;

/** Whether `s` is a scope of the catalogue. */
export const isScope = (s: string): boolean => scopeCatalogue().scopes.includes(s);

/** The built-in roles (ScopeCatalogue.builtInRoles). */
export const builtInRoles = (): ReadonlyMap<string, readonly Scope[]> => scopeCatalogue().builtInRoles;

/** Whether `Type.field` is public (the catalogue's publicFields). */
export function isPublicField(typeName: string, fieldName: string): boolean {
  if (fieldName.startsWith('__')) return true;
  const pub = scopeCatalogue().publicFields;
  return pub.has(typeName) || pub.has(`${typeName}.${fieldName}`);
}

/** Federation's `@requiresScopes(scopes: [[…]])`: one group, every scope in it required. */
function requiresScopesDirective(scopes: readonly DeclaredScope[]): string {
  return `@requiresScopes(scopes: [[${scopes.map((s) => JSON.stringify(s)).join(', ')}]])`;
}

type AnyDecorator = MethodDecorator & PropertyDecorator & ClassDecorator;

function directiveDecorator(sdl: string): AnyDecorator {
  const directive = Directive(sdl);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined) return (directive as ClassDecorator)(target as Function);
    (directive as MethodDecorator)(target, key, descriptor!);
  }) as AnyDecorator;
}

/**
 * A field (query, mutation, field resolver or property) that needs every one of `scopes`.
 * On a class (an object type), every field of it inherits the need.
 */
export function RequiresScopes(...scopes: [DeclaredScope, ...DeclaredScope[]]): AnyDecorator {
  return directiveDecorator(requiresScopesDirective(scopes));
}

/** Federation's `@authenticated`: any caller with a valid token. */
export function Authenticated(): AnyDecorator {
  return directiveDecorator('@authenticated');
}

/**
 * What a field needs: `public`, `authenticated`, or the alternatives of scope groups (any one
 * group, every scope in it). The field's own declaration, else its type's, else (neither, and
 * public in the catalogue) a caller with a token: an undeclared field is never open.
 */
export type Requirement = 'public' | 'authenticated' | readonly (readonly string[])[];

export function fieldRequirement(parent: GraphQLCompositeType, field: GraphQLField<unknown, unknown>): Requirement {
  const own = declared(field.astNode?.directives);
  if (own) return own;
  if (isObjectType(parent) || isInterfaceType(parent)) {
    for (const node of [parent.astNode, ...(parent.extensionASTNodes ?? [])]) {
      const inherited = declared(node?.directives);
      if (inherited) return inherited;
    }
  }
  return isPublicField(parent.name, field.name) ? 'public' : 'authenticated';
}

function declared(directives: readonly ConstDirectiveNode[] | undefined): Requirement | undefined {
  for (const d of directives ?? []) {
    if (d.name.value === 'authenticated') return 'authenticated';
    if (d.name.value !== 'requiresScopes') continue;
    const arg = d.arguments?.find((a) => a.name.value === 'scopes')?.value;
    if (arg?.kind !== Kind.LIST) continue;
    return arg.values.map((group) =>
      group.kind === Kind.LIST ? group.values.flatMap((v) => (v.kind === Kind.STRING ? [v.value] : [])) : [],
    );
  }
  return undefined;
}

/** Whether a field of the schema carries a declaration of its own or through its type (the supergraph test). */
export function isDeclared(schema: GraphQLSchema, typeName: string, fieldName: string): boolean {
  const type = schema.getType(typeName);
  if (!type || !(isObjectType(type) || isInterfaceType(type))) return false;
  const field = type.getFields()[fieldName];
  if (declared(field?.astNode?.directives)) return true;
  return [type.astNode, ...(type.extensionASTNodes ?? [])].some((n) => declared(n?.directives) !== undefined);
}

/** Whether `scopes` satisfy the requirement's groups (one group whole). */
export function satisfies(groups: readonly (readonly string[])[], scopes: ReadonlySet<string>): boolean {
  return groups.some((group) => group.every((s) => scopes.has(s)));
}
