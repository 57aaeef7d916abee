// Every field of the composed supergraph (every subgraph of this build, subgraphs/index.ts, so a
// module that lands is covered by the same test) declares what it needs, with Federation's
// @authenticated or @requiresScopes on the field or on its type, unless it is in the one list
// of public fields (the catalogue's, composed from the module definitions: lib/scopes.ts). A new field without a declaration fails here.
import { buildASTSchema, isInterfaceType, isObjectType, parse } from 'graphql';
import { buildSubgraphSdls } from '../../bin/compose';
import { composeSupergraph } from '../../gateway/compose';
import { isDeclared, isPublicField, scopeCatalogue } from '../../lib/scopes';
import { TEST_DB } from '../helpers/server';

// Composition reads no database: one pass is enough.
const once = TEST_DB === 'sqlite' ? describe : describe.skip;

/** Types of the supergraph's own machinery (join, link, the federation spec's) and introspection's. */
const machinery = (name: string) => name.startsWith('__') || /^(join|link)__/.test(name) || name.startsWith('_');

once('scope declarations', () => {
  let supergraph: string;
  let sdls: { name: string; sdl: string }[];
  beforeAll(async () => {
    sdls = await buildSubgraphSdls([]);
    supergraph = composeSupergraph(sdls.map((s) => ({ ...s, url: `http://${s.name}.invalid/graphql` })));
  }, 60_000);

  it('are on every field of the supergraph that is not public', () => {
    const schema = buildASTSchema(parse(supergraph), { assumeValidSDL: true });
    const undeclared: string[] = [];
    let fields = 0;
    for (const type of Object.values(schema.getTypeMap())) {
      if (machinery(type.name) || !(isObjectType(type) || isInterfaceType(type))) continue;
      for (const field of Object.keys(type.getFields())) {
        fields++;
        if (!isDeclared(schema, type.name, field) && !isPublicField(type.name, field))
          undeclared.push(`${type.name}.${field}`);
      }
    }
    expect(fields).toBeGreaterThan(50);
    expect(undeclared).toEqual([]);
  });

  it('show in each subgraph SDL and in the supergraph, with the contract scopes', () => {
    for (const { name, sdl } of sdls)
      expect({ name, declares: /@requiresScopes|@authenticated/.test(sdl) }).toEqual({ name, declares: true });
    expect(supergraph).toMatch(/: Voice! @join__field\(graph: TTS\) @requiresScopes\(scopes: \[\["tts:write"\]\]\)/);
    expect(supergraph).toMatch(
      /: UserPage! @join__field\(graph: AUTH\) @requiresScopes\(scopes: \[\["admin:users"\]\]\)/,
    );
    expect(supergraph).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/requiresScopes\/v0\.1", for: SECURITY\)/);
    expect(supergraph).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/authenticated\/v0\.1", for: SECURITY\)/);
  });

  it('the public list names only what exists', () => {
    const schema = buildASTSchema(parse(supergraph), { assumeValidSDL: true });
    const subgraphOnly = new Set(['Query._service', 'Query._entities', '_Service']);
    for (const entry of scopeCatalogue().publicFields) {
      if (subgraphOnly.has(entry)) continue;
      const [type, field] = entry.split('.');
      const found = schema.getType(type);
      expect({
        entry,
        exists: Boolean(found && (!field || (isObjectType(found) && found.getFields()[field]))),
      }).toEqual({
        entry,
        exists: true,
      });
    }
  });
});
