// The module list (subgraphs/index.ts) and what its definitions declare: each module's subgraph
// loads under its own name, what it states about scopes and public fields agrees with the lists
// roles are checked against (lib/scopes.ts), and the facade's route table takes every module's
// routes once, refusing a name declared twice. No database: one pass is enough.
import { selectModules } from '../../lib/module';
import { composeScopes, isScope, scopeCatalogue } from '../../lib/scopes';
import { routeTable } from '../../rest-facade/route-table';
import { Router } from 'express';
import type { ModuleRoutes, MountedRoute, RouteSpec } from '../../rest-facade/route-spec';
import { facadeRoutes, modules, selectSubgraphs } from '../../subgraphs';
import { TEST_DB } from '../helpers/server';

const once = TEST_DB === 'sqlite' ? describe : describe.skip;

once('the module list', () => {
  it("loads each module's subgraph under the module's name, in the list's order", async () => {
    const names = modules.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    expect((await selectSubgraphs([])).map((s) => s.name)).toEqual(names);
    expect((await selectSubgraphs(['tts', 'auth'])).map((s) => s.name)).toEqual(['tts', 'auth']);
    expect(() => selectModules(modules, ['nope'])).toThrow(/Unknown subgraph "nope"; known: auth, tts/);
  });

  it('states only scopes roles may grant, and public fields of the one public list', () => {
    const stated = modules.flatMap((m) => (m.scopes ?? []).map((scope) => ({ module: m.name, scope })));
    expect(stated.length).toBeGreaterThan(10);
    expect(stated.filter(({ scope }) => !isScope(scope))).toEqual([]);
    const fields = modules.flatMap((m) => m.publicFields ?? []);
    expect(fields.filter((f) => !scopeCatalogue().publicFields.has(f))).toEqual([]);
  });

  it("composes the catalogue from the modules' declarations, in the contract's order", () => {
    expect(scopeCatalogue().scopes).toEqual([
      'notes:read',
      'notes:write',
      'vault:read',
      'vault:write',
      'hubs:read',
      'hubs:write',
      'tts:read',
      'tts:write',
      'tts:synthesize',
      'transfer:read',
      'transfer:write',
      'events:read',
      'account:write',
      'admin:users',
      'admin:roles',
      'admin:integrations',
    ]);
    expect(scopeCatalogue().builtInRoles.get('user')).not.toContain('admin:users');
    expect([...scopeCatalogue().publicFields].sort()).toEqual(
      ['ApiKeyToken', 'BaseVoice', 'Mutation.exchangeApiKey', 'Mutation.login', 'Mutation.refreshSession']
        .concat(['Query._entities', 'Query._service', 'Query.baseVoices', 'TokenSet', '_Service'])
        .sort(),
    );
    // A module the list adds brings its scopes after the named ones, before the host's and the admin ones.
    const added = composeScopes(
      [...modules, { name: 'reviews', scopes: ['reviews:read', 'reviews:write'] }],
      ['notes'],
    );
    expect(added.scopes.indexOf('reviews:write') + 1).toBe(added.scopes.indexOf('events:read'));
    expect(added.builtInRoles.get('admin')).toContain('reviews:read');
  });

  it("hands the facade every module's routes and the event stream's, each once", () => {
    const table = routeTable(facadeRoutes);
    const declared = modules.flatMap((m) => m.routes?.routes ?? []);
    // + GET /events, and GET and DELETE /trash (built from the modules' trash parts)
    expect(table.routes.length).toBe(declared.length + 3);
    expect(table.routes.map((r) => r.operationId)).toEqual(
      expect.arrayContaining(['login', 'createVoice', 'streamEvents']),
    );
    expect(Object.keys(table.schemas).slice(0, 3)).toEqual(['ErrorObject', 'CommandAck', 'Health']);
    expect(table.tags.map((t) => t.name)).toEqual([
      'Auth',
      'Admin',
      'TTS',
      'Hubs',
      'Webhooks',
      'Note',
      'Note folder',
      'Vault',
      'Imports',
      'Exports',
      'Trash',
      'Events',
    ]);
    expect(table.tags.every((t) => t.description)).toBe(true);
    // The endpoints beside /api/v1: the tts module's OpenAI-compatible speech, its tag after the API's own.
    expect(table.mounted.map((m) => `${m.method.toUpperCase()} ${m.path}`)).toEqual(['POST /v1/audio/speech']);
    expect(table.mountedTags.map((t) => t.name)).toEqual(['OpenAI compatibility']);
  });
});

describe('the route table', () => {
  const route = (operationId: string, path: string): RouteSpec => ({
    operationId,
    method: 'get',
    path,
    tag: 'T',
    summary: 's',
    auth: true,
    graphql: { kind: 'query', field: 'f', select: '{ id }' },
    status: 200,
    response: { type: 'object' },
    errors: [],
  });
  const a: ModuleRoutes = { routes: [route('getA', '/a')], schemas: { A: { type: 'object' } }, tags: [{ name: 'A' }] };

  it('refuses a name declared twice across modules: an operationId, a method and path, a schema, a tag', () => {
    expect(() => routeTable([a, { routes: [route('getA', '/b')] }])).toThrow(/operationId getA twice/);
    expect(() => routeTable([a, { routes: [route('getB', '/a')] }])).toThrow(/GET \/a twice/);
    expect(() => routeTable([a, { routes: [], schemas: { A: {} } }])).toThrow(/schema A twice/);
    expect(() => routeTable([a, { routes: [], schemas: { CommandAck: {} } }])).toThrow(/schema CommandAck twice/);
    expect(() => routeTable([a, { routes: [], tags: [{ name: 'A' }] }])).toThrow(/tag A twice/);
    expect(routeTable([a, { routes: [route('getB', '/b')] }]).routes.map((r) => r.path)).toEqual(['/a', '/b']);
  });

  const mount = (operationId: string, path: string, tag = 'M'): MountedRoute => ({
    method: 'post',
    path,
    openapi: { operationId },
    tag: { name: tag, description: 'd' },
    operations: [],
    router: () => Router(),
  });

  it('takes mounted routes beside /api/v1, their tags once, and refuses one below it or a name declared twice', () => {
    const table = routeTable([a, { routes: [], mounted: [mount('postM', '/v1/m'), mount('postN', '/v1/n')] }]);
    expect(table.mounted.map((m) => m.path)).toEqual(['/v1/m', '/v1/n']);
    expect(table.mountedTags).toEqual([{ name: 'M', description: 'd' }]);
    expect(() => routeTable([{ routes: [], mounted: [mount('postM', '/api/v1/m')] }])).toThrow(/below \/api\/v1/);
    expect(() => routeTable([a, { routes: [], mounted: [mount('getA', '/v1/m')] }])).toThrow(/operationId getA twice/);
    expect(() => routeTable([{ routes: [], mounted: [mount('postM', '/v1/m'), mount('postN', '/v1/m')] }])).toThrow(
      /POST \/v1\/m twice/,
    );
    expect(() => routeTable([a, { routes: [], mounted: [mount('postM', '/v1/m', 'A')] }])).toThrow(/tag A twice/);
  });
});
