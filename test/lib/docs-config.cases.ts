// The configuration table in docs/configuration.md against lib/config.ts: every setting of the
// schema has a row, every row names a setting, and a default the schema fills is the one the
// table states. No database: the same on both jest projects.
import fs from 'node:fs';
import path from 'node:path';
import { configSchema } from '../../lib/config';

const DOC = path.join(__dirname, '../../docs/configuration.md');

interface Row {
  names: string[];
  /** The backticked values of the default cell, in order: one per setting the schema fills. */
  defaults: string[];
  line: number;
}

/** The rows of the first table: `VAR[, VAR…]` | default | meaning. */
function tableRows(markdown: string): Row[] {
  const rows: Row[] = [];
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^\|\s*variable\s*\|/.test(l));
  if (start < 0) throw new Error(`${DOC}: no table with a "variable" column`);
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
});
