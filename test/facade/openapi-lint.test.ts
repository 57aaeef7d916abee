// The served OpenAPI document is valid OpenAPI 3.0.3 by the tools its users lint with: Spectral's
// `spectral:oas` (.spectral.yaml) and Redocly's recommended rules (redocly.yaml, with the findings
// looked at and kept in .redocly.lint-ignore.yaml). Any error fails; warnings are printed. The
// document needs no database, so this runs once, in the sqlite project.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../lib/config';
import { listen } from '../../lib/http-server';
import { createLogger } from '../../lib/logger';
import { createFacadeApp } from '../../rest-facade/app';
import { facadeRoutes } from '../../subgraphs';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const CONFIG_FILES = ['.spectral.yaml', 'redocly.yaml', '.redocly.lint-ignore.yaml'];
const bin = (pkg: string, name: string) => {
  const manifest = require.resolve(`${pkg}/package.json`);
  const { bin } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return path.join(path.dirname(manifest), bin[name]);
};

interface Finding {
  tool: string;
  severity: 'error' | 'warning';
  rule: string;
  where: string;
  message: string;
}

/** The tool's findings, by the tool's exit and its JSON report (a tool that failed to run is an error). */
async function lint(dir: string): Promise<Finding[]> {
  const options = {
    cwd: dir,
    maxBuffer: 64 << 20,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  };
  const output = async (args: string[], toFile = false) => {
    try {
      return (await run(process.execPath, args, options)).stdout;
    } catch (e) {
      // Both exit 1 when they find an error; their report is still there.
      const { stdout, stderr } = e as { stdout?: string; stderr?: string };
      if (!toFile && !stdout?.trim()) throw new Error(`${args[0]} did not run: ${stderr}`, { cause: e });
      return stdout ?? '';
    }
  };
  // Spectral's report to a file: on stdout it is followed by a sentence when nothing is found.
  await output(
    [
      bin('@stoplight/spectral-cli', 'spectral'),
      'lint',
      'openapi.json',
      '--ruleset',
      '.spectral.yaml',
      '--format',
      'json',
      '--output',
      'spectral.json',
    ],
    true,
  );
  const spectral = JSON.parse(fs.readFileSync(path.join(dir, 'spectral.json'), 'utf8')) as {
    code: string;
    message: string;
    path: string[];
    severity: number;
  }[];
  const redocly = JSON.parse(
    await output([
      bin('@redocly/cli', 'redocly'),
      'lint',
      'openapi.json',
      '--config',
      'redocly.yaml',
      '--format',
      'json',
    ]),
  ) as { problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[] };
  return [
    ...spectral
      .filter((p) => p.severity <= 1)
      .map((p) => ({
        tool: 'spectral',
        severity: p.severity === 0 ? ('error' as const) : ('warning' as const),
        rule: p.code,
        where: p.path.join('.'),
        message: p.message,
      })),
    ...redocly.problems.map((p) => ({
      tool: 'redocly',
      severity: p.severity === 'error' ? ('error' as const) : ('warning' as const),
      rule: p.ruleId,
      where: p.location[0]?.pointer ?? '',
      message: p.message,
    })),
  ];
}

/** A folder with the document as openapi.json beside the linters' settings (the ignore file names it so). */
function workspace(document: unknown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
  for (const file of CONFIG_FILES) fs.copyFileSync(path.join(ROOT, file), path.join(dir, file));
  fs.writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(document, null, 2));
  return dir;
}

const inSqliteProject = process.env.TEST_DB !== 'mysql' ? describe : describe.skip;

inSqliteProject('the served OpenAPI document, by Spectral and Redocly', () => {
  let served: Record<string, any>;
  const dirs: string[] = [];

  beforeAll(async () => {
    const config = loadConfig({ LOG_LEVEL: 'silent' });
    const app = createFacadeApp({
      config,
      logger: createLogger(config),
      routes: facadeRoutes,
      // Serving the document asks no subgraph.
      graphql: { execute: async () => ({}), checks: async () => ({}), subscribe: async () => ({}) },
    });
    const server = await listen(app, 0, '127.0.0.1');
    try {
      served = (await (await fetch(`${server.url}/api/v1/openapi.json`)).json()) as Record<string, any>;
    } finally {
      await server.close(100);
    }
  });
  afterAll(() => dirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

  it('has no error (warnings are listed)', async () => {
    expect(served.openapi).toBe('3.0.3');
    const dir = workspace(served);
    dirs.push(dir);
    const findings = await lint(dir);
    const warnings = findings.filter((f) => f.severity === 'warning');
    if (warnings.length)
      console.warn(`${warnings.length} warnings:\n${warnings.map((w) => JSON.stringify(w)).join('\n')}`);
    expect(findings.filter((f) => f.severity === 'error')).toEqual([]);
  }, 120_000);

  it('finds what 3.0 does not allow: the check is real', async () => {
    const broken: Record<string, any> = structuredClone(served);
    const firstSchema = Object.values(broken.components.schemas)[0] as Record<string, unknown>;
    firstSchema.type = ['object', 'null']; // 3.1's nullable
    const firstPath: Record<string, { description?: string }> = Object.values(broken.paths)[0] as never;
    delete Object.values(firstPath)[0].description;
    const dir = workspace(broken);
    dirs.push(dir);
    const errors = (await lint(dir)).filter((f) => f.severity === 'error');
    expect(errors.map((e) => `${e.tool} ${e.rule}`).sort()).toEqual(
      expect.arrayContaining([
        'redocly operation-description',
        'redocly struct',
        'spectral oas3-schema',
        'spectral operation-description',
      ]),
    );
  }, 120_000);
});
