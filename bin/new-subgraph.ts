// `npm run new-subgraph -- <name> [--entity <Type>]`: a working subgraph for a partner team,
// built the house way — an entity with a UUIDv7 id and a version, its migration, a paged list,
// get, create, update and delete at the expected version, events through the outbox — in
// subgraphs/<name>/ with its REST routes (routes.ts, in the OpenAPI document), its settings (its cap,
// settings.ts) and its definition (module.ts), its test in test/<name>/, and one line in the module
// list, subgraphs/index.ts.
//
// The templates are real code, type-checked with the rest (tsconfig.json includes templates/):
// templates/subgraph/ is the module and templates/subgraph-test/ its test, written for a
// subgraph `examples` whose entity is `ExampleItem`. Generating copies them with the names
// replaced (see renameTemplate); a template that changes is checked by `npm run typecheck`.
import fs from 'node:fs';
import path from 'node:path';

export interface SkeletonNames {
  /** Subgraph and database name: `reviews`. */
  name: string;
  /** GraphQL and TypeORM entity: `Review`. */
  entity: string;
  /** `review`, for fields. */
  camel: string;
  /** `review`, for files (`order-line` for OrderLine). */
  kebab: string;
  /** `review`, for event types and columns (`order_line`). */
  snake: string;
  /** `review`, in sentences (`order line`). */
  words: string;
  /** Table: `reviews`. */
  table: string;
}

export function skeletonNames(name: string, entity?: string): SkeletonNames {
  if (!/^[a-z][a-z0-9]{1,29}$/.test(name)) {
    throw new Error(`"${name}" is not a subgraph name: 2–30 lower-case letters and digits, starting with a letter`);
  }
  const type = entity ?? name[0].toUpperCase() + name.slice(1).replace(/s$/, '');
  if (!/^[A-Z][A-Za-z0-9]{1,39}$/.test(type))
    throw new Error(`"${type}" is not an entity name: PascalCase letters and digits`);
  const kebab = type.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  const snake = kebab.replace(/-/g, '_');
  return {
    name,
    entity: type,
    camel: type[0].toLowerCase() + type.slice(1),
    kebab,
    snake,
    words: kebab.replace(/-/g, ' '),
    table: `${snake}s`,
  };
}

/** Where the templates are: beside bin/ in the sources, two folders up from dist/bin/. */
const TEMPLATES =
  [path.join(__dirname, '../templates'), path.join(__dirname, '../../templates')].find((dir) => fs.existsSync(dir)) ??
  '';

/** The template migration's timestamp, replaced by the time of generating. */
const TEMPLATE_MIGRATION_TIME = '1700000000000';

/** A template's text or path with the template's names (examples, ExampleItem) replaced by `n`'s. */
export function renameTemplate(text: string, n: SkeletonNames, timestamp: number): string {
  const renamed = text
    .replaceAll(TEMPLATE_MIGRATION_TIME, String(timestamp))
    // Setting names: EXAMPLE_ITEMS_PER_USER becomes REVIEWS_PER_USER.
    .replaceAll('EXAMPLE_ITEM', n.snake.toUpperCase())
    .replaceAll('ExampleItem', n.entity)
    .replaceAll('exampleItem', n.camel)
    .replaceAll('example-item', n.kebab)
    .replaceAll('example_item', n.snake)
    .replaceAll('example item', n.words)
    .replaceAll('examples', n.name)
    // The test template reaches the test helpers from templates/; the generated test sits beside them.
    .replaceAll("'../../test/helpers/", "'../helpers/");
  // A name the list above does not know would leave the template's word behind.
  const left = /example/i.exec(renamed);
  if (left)
    throw new Error(
      `a template holds "${renamed.slice(left.index - 20, left.index + 20)}": name it with one of the template's names`,
    );
  return renamed;
}

function templateFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? templateFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/** The generated files by their path from the project root. */
export function skeletonFiles(n: SkeletonNames, timestamp: number, templates = TEMPLATES): Record<string, string> {
  const files: Record<string, string> = {};
  const copy = (from: string, to: string) => {
    for (const file of templateFiles(path.join(templates, from))) {
      const target = path.posix.join(to, path.relative(path.join(templates, from), file).split(path.sep).join('/'));
      files[renameTemplate(target, n, timestamp)] = renameTemplate(fs.readFileSync(file, 'utf8'), n, timestamp);
    }
  };
  copy('subgraph', `subgraphs/${n.name}`);
  copy('subgraph-test', `test/${n.name}`);
  return files;
}

/** Adds the module to the module list, subgraphs/index.ts (its import and its entry): everything it contributes comes with it. */
export function registerModule(indexSource: string, n: SkeletonNames): string {
  const importLine = `import { ${n.name}Module } from './${n.name}/module';\n`;
  const withImport = indexSource.replace(/(import [^\n]+\n)(?![\s\S]*import )/, `$1${importLine}`);
  const withEntry = withImport.replace(/(modules[^=]*=\s*\[[^\]]*?)(\n\];)/, `$1\n  ${n.name}Module,$2`);
  if (withEntry === withImport || withImport === indexSource)
    throw new Error('could not add the module to subgraphs/index.ts; add it by hand');
  return withEntry;
}

function main(argv: string[], root: string): number {
  const [name, flag, entity] = argv;
  if (!name || (flag && flag !== '--entity') || (flag && !entity)) {
    console.error('usage: npm run new-subgraph -- <name> [--entity <Type>]');
    return 2;
  }
  const names = skeletonNames(name, entity);
  if (fs.existsSync(path.join(root, 'subgraphs', name))) {
    console.error(`subgraphs/${name} exists already`);
    return 1;
  }
  const files = skeletonFiles(names, Date.now());
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text, { flag: 'wx' });
  }
  const index = path.join(root, 'subgraphs', 'index.ts');
  fs.writeFileSync(index, registerModule(fs.readFileSync(index, 'utf8'), names));
  console.log(
    [
      `Created the ${name} subgraph:`,
      ...Object.keys(files).map((f) => `  ${f}`),
      '  (listed in subgraphs/index.ts; its scopes are declared in its module.ts, its settings in its settings.ts)',
      '',
      `Next: npm run compose -- --check    npm run docs:config    npm test -- test/${name}`,
    ].join('\n'),
  );
  return 0;
}

if (require.main === module) {
  try {
    // Run from the project root (npm run sets the working directory to it).
    process.exit(main(process.argv.slice(2), process.cwd()));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
