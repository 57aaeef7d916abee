// `npm run docs:config`: writes the modules' settings into docs/configuration.md from their
// fragments (subgraphs/<name>/settings.ts, declared by each module's definition): one table per
// module, between the page's markers, with each setting's default as the schema fills it (or as
// its `.meta({ shownDefault })` shows it) and its meaning as `.describe()` says it. test/lib/docs-config.test.ts fails when the page is stale.
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { settingKinds } from '../lib/config';
import type { ModuleDefinition } from '../lib/module';
import { modules } from '../subgraphs';

export const BEGIN =
  "<!-- The modules' settings: written by `npm run docs:config` from each module's settings.ts; do not edit by hand. -->";
export const END = "<!-- End of the modules' settings. -->";

/** A default as an env file would write it (lists joined with commas). */
const shown = (v: unknown) => (Array.isArray(v) ? v.join(',') : String(v));

/** The generated part: a table per module that declares settings, in the module list's order. */
export function moduleSettingsDocs(list: readonly ModuleDefinition[] = modules): string {
  const kinds = settingKinds();
  const parts: string[] = [];
  for (const m of list) {
    if (!m.settings) continue;
    const shape = m.settings(kinds);
    const defaults: Record<string, unknown> = z.object(shape).parse({});
    parts.push(`### ${m.name}`, '', '| variable | default | meaning |', '|---|---|---|');
    for (const [name, type] of Object.entries(shape)) {
      const value = defaults[name];
      // `.meta({ shownDefault })`: the default as the row shows it (a size in words, the folder an unset one stands for).
      const stated = (type.meta() as { shownDefault?: string } | undefined)?.shownDefault;
      const dflt = stated ?? (value === undefined || shown(value) === '' ? 'unset' : `\`${shown(value)}\``);
      const meaning = (type.description ?? '').replace(/\|/g, '\\|');
      if (!meaning) throw new Error(`${m.name}: the setting ${name} has no .describe() (its meaning in the docs)`);
      parts.push(`| \`${name}\` | ${dflt} | ${meaning} |`);
    }
    parts.push('');
  }
  return [BEGIN, '', ...parts, END].join('\n');
}

/** `page` with its generated part replaced by `generated`; an error when the markers are missing. */
export function withModuleSettings(page: string, generated: string): string {
  const start = page.indexOf(BEGIN);
  const end = page.indexOf(END);
  if (start < 0 || end < start) throw new Error("docs/configuration.md: the generated part's markers are missing");
  return page.slice(0, start) + generated + page.slice(end + END.length);
}

if (require.main === module) {
  // Run from the project root (npm run sets the working directory to it).
  const doc = path.join(process.cwd(), 'docs', 'configuration.md');
  fs.writeFileSync(doc, withModuleSettings(fs.readFileSync(doc, 'utf8'), moduleSettingsDocs()));
  console.log(`${path.relative(process.cwd(), doc)}: the modules' settings written`);
}
