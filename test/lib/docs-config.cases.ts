// The configuration tables in docs/configuration.md against lib/config.ts with every module's
// fragment merged: every setting of the schema has a row, every row names a setting, and a default
// the schema fills is the one the table states; the modules' part is what `npm run docs:config`
// writes from their fragments. No database: the same on both jest projects.
import fs from 'node:fs';
import path from 'node:path';
import { moduleSettingsDocs, withModuleSettings } from '../../bin/config-docs';
import { configSchema, installedSettings, installSettings } from '../../lib/config';
import { modules } from '../../subgraphs';

const DOC = path.join(__dirname, '../../docs/configuration.md');

interface Row {
  names: string[];
  /** The backticked values of the default cell, in order: one per setting the schema fills. */
  defaults: string[];
  line: number;
}

/** The rows of every table with a "variable" column: `VAR[, VAR…]` | default | meaning. */
function tableRows(markdown: string): Row[] {
  const rows: Row[] = [];
  const lines = markdown.split('\n');
  const starts = lines.flatMap((l, i) => (/^\|\s*variable\s*\|/.test(l) ? [i] : []));
  if (!starts.length) throw new Error(`${DOC}: no table with a "variable" column`);
  for (const start of starts)
    for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
      // Cells split on pipes not escaped as \| (the meaning column may contain `a\|b`).
      const [name, dflt] = lines[i]
        .split(/(?<!\\)\|/)
        .slice(1)
        .map((c) => c.trim());
      rows.push({
        names: [...name.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
        defaults: [...dflt.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
        line: i + 1,
      });
    }
  return rows;
}

/** What the table should say for a default: arrays joined, the rest as written in an env file. */
const shown = (v: unknown) => (Array.isArray(v) ? v.join(',') : String(v));

describe('docs/configuration.md', () => {
  it('lists exactly the settings of lib/config.ts, with their defaults', () => {
    const schema = configSchema();
    const settings = Object.keys(schema.shape);
    const defaults: Record<string, unknown> = schema.parse({});
    const rows = tableRows(fs.readFileSync(DOC, 'utf8'));
    const documented = rows.flatMap((r) => r.names);

    const problems: string[] = [];
    for (const name of settings) {
      if (!documented.includes(name)) {
        problems.push(
          `missing from the table: ${name}${name in defaults ? ` (default \`${shown(defaults[name])}\`)` : ''}`,
        );
      }
    }
    for (const name of documented) {
      if (!settings.includes(name)) problems.push(`in the table but not in lib/config.ts: ${name}`);
    }
    for (const row of rows) {
      // A setting the schema leaves unset (or an empty list) is described in words ("unset",
      // "generated", "all", a value worked out elsewhere): only filled defaults are compared.
      const filled = row.names.filter((n) => n in defaults && shown(defaults[n]) !== '');
      filled.forEach((name, i) => {
        const stated = row.defaults[i];
        if (stated !== shown(defaults[name])) {
          problems.push(
            `${name}: the table (line ${row.line}) says ${stated === undefined ? 'no default' : `\`${stated}\``}, lib/config.ts \`${shown(defaults[name])}\``,
          );
        }
      });
    }
    expect(problems).toEqual([]);
  });

  it("has the modules' settings as their fragments say (npm run docs:config writes them)", () => {
    const page = fs.readFileSync(DOC, 'utf8');
    expect(installedSettings().map((f) => f.module)).toEqual(modules.filter((m) => m.settings).map((m) => m.name));
    // Stale: run `npm run docs:config`.
    expect(page).toBe(withModuleSettings(page, moduleSettingsDocs()));
  });

  it('refuses a setting two fragments declare, naming both', () => {
    const [first] = installedSettings();
    const loaded = installedSettings();
    try {
      installSettings([...loaded, { module: 'twin', settings: first.settings }]);
      expect(() => configSchema()).toThrow(new RegExp(`declared by the ${first.module} module and by the twin module`));
    } finally {
      installSettings(loaded);
    }
  });
});
