// `npm run new-subgraph`: the skeleton, generated into a copy of this project, builds,
// composes with the rest, and passes its own generated test (a deleted user's rows removed by the
// kit's cascade among them).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { registerModule, renameTemplate, skeletonFiles, skeletonNames } from '../../bin/new-subgraph';
import { TEST_DB } from '../helpers/server';

const ROOT = path.join(__dirname, '../..');
const GENERATOR = path.join(ROOT, 'dist/bin/new-subgraph.js');
const once = TEST_DB === 'sqlite' ? describe : describe.skip;

/** The project's sources, without what is built, installed or stored. */
function copyProject(into: string) {
  const skip = new Set(['node_modules', 'dist', 'data', '.git', 'coverage']);
  fs.cpSync(ROOT, into, {
    recursive: true,
    filter: (src) => !skip.has(path.basename(src)) || path.dirname(src) !== ROOT,
  });
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(into, 'node_modules'));
}

/** The files of `copy` that differ from the project's, outside `own` (folders) and what is built or installed. */
function changedOutside(copy: string, own: string[]): string[] {
  const changed: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(copy, rel), { withFileTypes: true })) {
      const file = path.posix.join(rel, e.name);
      if (['node_modules', 'dist', 'data', 'coverage'].includes(file) || own.some((o) => `${file}/`.startsWith(o)))
        continue;
      if (e.isSymbolicLink()) continue;
      if (e.isDirectory()) walk(file);
      else if (
        !fs.existsSync(path.join(ROOT, file)) ||
        !fs.readFileSync(path.join(ROOT, file)).equals(fs.readFileSync(path.join(copy, file)))
      )
        changed.push(file);
    }
  };
  walk('');
  return changed;
}

const run = (cwd: string, args: string[]) =>
  spawnSync(process.execPath, args, { cwd, encoding: 'utf8', env: { ...process.env, LOG_LEVEL: 'silent' } });

once('npm run new-subgraph', () => {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'skeleton-'));
  afterAll(() => fs.rmSync(copy, { recursive: true, force: true }));

  it('generates a subgraph that builds, composes and passes its test', () => {
    copyProject(copy);
    const generated = run(copy, [GENERATOR, 'reviews']);
    expect(generated.stderr).toBe('');
    expect(generated.status).toBe(0);
    expect(fs.readFileSync(path.join(copy, 'subgraphs/index.ts'), 'utf8')).toMatch(/\n {2}reviewsModule,\n\];/);
    // Nothing else changes: its scopes, routes and settings are declared in its own folder.
    expect(changedOutside(copy, ['subgraphs/reviews/', 'test/reviews/'])).toEqual(['subgraphs/index.ts']);

    const build = run(copy, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json']);
    expect(build.stdout + build.stderr).toBe('');
    const compose = run(copy, ['dist/bin/compose.js', '--check']);
    expect(compose.stdout).toMatch(/auth.*reviews compose/);

    const test = run(copy, [require.resolve('jest/bin/jest'), 'test/reviews', '--selectProjects', 'sqlite']);
    expect(test.stderr).toMatch(/Tests:\s+6 passed, 6 total/);
    expect(test.status).toBe(0);

    // The module conformance suite runs over the copy's module list, the new module included (its row built from its routes).
    const conformance = run(copy, [
      require.resolve('jest/bin/jest'),
      'test/kit/module-conformance.test.ts',
      '--selectProjects',
      'sqlite',
      '-t',
      'reviews',
    ]);
    expect(conformance.stderr).toMatch(/✓ answers another user's resource as not_found/);
    // Its cap is its own setting (REVIEWS_PER_USER, in its settings.ts), fired at like every module's.
    expect(conformance.stderr).toMatch(/✓ holds its cap under 50 concurrent creates/);
    expect(conformance.stderr).toMatch(/✓ gives a stale version the one conflict shape/);
    expect(conformance.stderr).toMatch(/✓ removes a deleted user's rows, in batches/);
    expect(conformance.stderr).toMatch(/✓ emits a typed event for every change/);
    expect(conformance.stderr).toMatch(/✓ the reviews module: every field it resolves declares its scopes/);
    expect(conformance.status).toBe(0);

    const again = run(copy, [GENERATOR, 'reviews']);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/exists already/);
  }, 480_000);

  it('refuses names that would not make a database or a GraphQL type', () => {
    for (const bad of ['Reviews', 'x', '1abc', 'my-reviews', 'a'.repeat(31)])
      expect(() => skeletonNames(bad)).toThrow(/not a subgraph name/);
    expect(skeletonNames('reviews')).toMatchObject({ entity: 'Review', camel: 'review', table: 'reviews' });
    expect(skeletonNames('shop', 'OrderLine')).toMatchObject({
      entity: 'OrderLine',
      kebab: 'order-line',
      snake: 'order_line',
      table: 'order_lines',
    });
  });

  it('copies every template with its names replaced, the module in subgraphs/<name>/ and its test in test/<name>/', () => {
    const files = skeletonFiles(skeletonNames('shop', 'OrderLine'), 1800000000000);
    expect(Object.keys(files).sort()).toEqual([
      'subgraphs/shop/entities/order-line.ts',
      'subgraphs/shop/events.ts',
      'subgraphs/shop/index.ts',
      'subgraphs/shop/migrations/1800000000000-CreateOrderLineTables.ts',
      'subgraphs/shop/module.ts',
      'subgraphs/shop/order-line-service.ts',
      'subgraphs/shop/resolvers/order-line-resolver.ts',
      'subgraphs/shop/routes.ts',
      'subgraphs/shop/settings.ts',
      'test/shop/order-line.test.ts',
    ]);
    const all = Object.values(files).join('\n');
    expect(all).not.toMatch(/example/i);
    expect(all).toMatch(/export const shopSubgraph/);
    expect(all).toMatch(/class OrderLinePage extends PageOf\(OrderLine\)/);
    expect(all).toMatch(/eventType\('order_line\.updated'/);
    expect(files['test/shop/order-line.test.ts']).toMatch(/from '\.\.\/helpers\/http'/);
    expect(files['subgraphs/shop/routes.ts']).toMatch(/path = '\/shop\/order-lines'|PATH = '\/shop\/order-lines'/);
    expect(files['subgraphs/shop/routes.ts']).toMatch(/export const shopRoutes/);
    // The cap's setting, named for the entity, declared in the module's own fragment.
    expect(files['subgraphs/shop/settings.ts']).toMatch(/export const PER_USER = 'ORDER_LINES_PER_USER'/);
    expect(files['subgraphs/shop/module.ts']).toMatch(/settings: shopSettings/);
    // A template word the renaming does not know is refused, not left in the module.
    expect(() => renameTemplate('an Example here', skeletonNames('shop'), 1)).toThrow(/template holds/);
  });

  it('adds the module to the module list, subgraphs/index.ts, with one import and one line', () => {
    const list = fs.readFileSync(path.join(ROOT, 'subgraphs/index.ts'), 'utf8');
    const once = registerModule(list, skeletonNames('shop'));
    expect(once).toMatch(/import \{ shopModule \} from '\.\/shop\/module';\n/);
    const twice = registerModule(once, skeletonNames('reviews'));
    expect(twice).toMatch(/\n {2}shopModule,\n {2}reviewsModule,\n\];/);
    expect(twice.split('\n').length - list.split('\n').length).toBe(4);
  });
});
