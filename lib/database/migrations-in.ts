// A module's migrations are the classes its migrations/ folder exports: a new migration is a new
// file there and nothing else (TypeORM's own `migrations: ['…/migrations/*.js']`, without its
// glob and ESM loader, so ts-jest and the build load them alike). TypeORM runs them in the order
// of the timestamp that ends each class name.
import { readdirSync } from 'node:fs';
import path from 'node:path';

export function migrationsIn(folder: string): Function[] {
  const files = readdirSync(folder)
    .filter((file) => /\.(ts|js)$/.test(file) && !file.endsWith('.d.ts'))
    .sort();
  const found: Function[] = [];
  for (const file of files) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by name, as TypeORM does
    const exported = require(path.join(folder, file)) as Record<string, unknown>;
    for (const value of Object.values(exported))
      if (typeof value === 'function' && typeof (value.prototype as { up?: unknown } | undefined)?.up === 'function')
        found.push(value);
  }
  if (!found.length) throw new Error(`no migration class in ${folder}`);
  return found;
}
