import { Authorized, Directive } from 'type-graphql';

/**
 * The scopes of the contract ("Admin: roles and scopes"). A field declares what it needs with
 * Federation's own directives, so that its subgraph's SDL and the supergraph show it and any
 * Federation-aware tool can read it.
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
  'account:write',
  'admin:users',
  'admin:roles',
  'admin:integrations',
] as const;

export type Scope = (typeof SCOPES)[number];

/** Federation's `@requiresScopes(scopes: [[…]])`: one group, every scope in it required. */
function requiresScopesDirective(scopes: readonly Scope[]): string {
  return `@requiresScopes(scopes: [[${scopes.map((s) => JSON.stringify(s)).join(', ')}]])`;
}

/**
 * A field (query, mutation, field resolver or property) that needs every one of `scopes`.
 * On a class (an object type), every field of it inherits the need.
 */
export function RequiresScopes(...scopes: [Scope, ...Scope[]]): MethodDecorator & PropertyDecorator & ClassDecorator {
  const directive = Directive(requiresScopesDirective(scopes));
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined) return (directive as ClassDecorator)(target as Function);
    (directive as MethodDecorator)(target, key, descriptor!);
    // Until the pipeline's scope step enforces the directive, the token is checked here too.
    (Authorized() as MethodDecorator)(target, key, descriptor!);
  }) as MethodDecorator & PropertyDecorator & ClassDecorator;
}

/** Federation's `@authenticated`: any caller with a valid token. */
export function Authenticated(): MethodDecorator & PropertyDecorator & ClassDecorator {
  const directive = Directive('@authenticated');
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined) return (directive as ClassDecorator)(target as Function);
    (directive as MethodDecorator)(target, key, descriptor!);
    (Authorized() as MethodDecorator)(target, key, descriptor!);
  }) as MethodDecorator & PropertyDecorator & ClassDecorator;
}
