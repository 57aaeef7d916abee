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
 * The scopes of the contract ("Admin: roles and scopes"). A field declares what it needs with
 * Federation's own directives, so that its subgraph's SDL and the supergraph show it and any
 * Federation-aware tool can read it. The pipeline's scope step (lib/operation-pipeline/scopes.ts)
 * enforces them in every subgraph.
 */
export const SCOPES = [
  'notes:read',
  'notes:write',
  'vault:read',
  'vault:write',
  'hubs:read',
  'hubs:write',
  'tts:read',
  'tts:write',
  'tts:synthesize',
  'events:read',
  'transfer:read',
  'transfer:write',
  'account:write',
  'admin:users',
  'admin:roles',
  'admin:integrations',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * What a declaration may name: a scope of the list, or a module's own `<module>:read` /
 * `<module>:write` (`npm run new-subgraph` adds those to SCOPES; a role can grant only listed ones).
 */
export type DeclaredScope = Scope | `${string}:read` | `${string}:write`;

const KNOWN = new Set<string>(SCOPES);
export const isScope = (s: string): s is Scope => KNOWN.has(s);

/**
 * The built-in roles: read-only, never stored. `admin` holds every scope, `user` every scope but
 * `admin:*`. A Map, never a plain object: a role named `constructor` or `__proto__` must not find
 * Object.prototype's members (issue 41, finding 9).
 */
export const BUILT_IN_ROLES: ReadonlyMap<string, readonly Scope[]> = new Map<string, readonly Scope[]>([
  ['admin', SCOPES],
  ['user', SCOPES.filter((s) => !s.startsWith('admin:'))],
]);

/**
 * The one list of what anyone may call without a token. GraphQL: `Type.field`, or `Type` for every
 * field of a type only public fields return; `__`-prefixed fields (introspection, `__typename`)
 * and the federation fields (`_service`, `_entities`: answered to hop-secret holders in
 * production, lib/hop.ts; the entities they return are checked by their own types) are public
 * too. REST routes outside GraphQL (health, JWKS, the OpenAPI document) are public by nature.
 */
export const PUBLIC_FIELDS: ReadonlySet<string> = new Set([
  'Mutation.login',
  'Mutation.refreshSession',
  'TokenSet',
  // The edge trades an API key for a short-lived token, as login trades a password.
  'Mutation.exchangeApiKey',
  'ApiKeyToken',
  // The public catalogue.
  'Query.baseVoices',
  'BaseVoice',
  // Federation.
  'Query._service',
  'Query._entities',
  '_Service',
]);

/** Whether `Type.field` is public (PUBLIC_FIELDS). */
export function isPublicField(typeName: string, fieldName: string): boolean {
  return fieldName.startsWith('__') || PUBLIC_FIELDS.has(typeName) || PUBLIC_FIELDS.has(`${typeName}.${fieldName}`);
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
 * not in PUBLIC_FIELDS) a caller with a token: an undeclared field is never open.
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
