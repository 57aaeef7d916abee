// `npm start`, `npm run compose`, `new-subgraph`, `users` and `migrate` go through scripts/built.js:
// tsc runs only when a source (or a tsconfig) is newer than the built entry point (issue 42: each
// start ran tsc, 27–61 s here, even when nothing had changed). Checked on a small project of its
// own, so that the repository's sources and dist/ are never touched while other files run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TEST_DB } from '../helpers/server';

const ROOT = path.join(__dirname, '../..');
// It touches no database: one run is enough.
const once = TEST_DB === 'sqlite' ? describe : describe.skip;

once('scripts/built.js', () => {
  let project: string;
  const entry = () => path.join(project, 'dist/bin/hello.js');
  const run = () =>
    spawnSync(process.execPath, [path.join(project, 'scripts/built.js'), 'bin/hello.js', 'there'], {
      encoding: 'utf8',
    });

  beforeAll(() => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'built-'));
    fs.mkdirSync(path.join(project, 'scripts'));
    fs.mkdirSync(path.join(project, 'bin'));
    fs.copyFileSync(path.join(ROOT, 'scripts/built.js'), path.join(project, 'scripts/built.js'));
    fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(project, 'node_modules'), 'dir');
    const compilerOptions = { target: 'ES2022', module: 'commonjs', outDir: 'dist', rootDir: '.', types: [] };
    fs.writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions }));
    fs.writeFileSync(
      path.join(project, 'tsconfig.build.json'),
      JSON.stringify({ extends: './tsconfig.json', include: ['bin'] }),
    );
    fs.writeFileSync(
      path.join(project, 'bin/hello.ts'),
      // As the project's entry points start: only when run as the main module.
      'declare const process: { argv: string[] }, require: { main: unknown }, module: unknown;\n' +
        'if (require.main === module) console.log(`hello ${process.argv[2]}`);\n',
    );
  });
  afterAll(() => fs.rmSync(project, { recursive: true, force: true }));

  it('builds when there is no build, then runs the entry point with its arguments', () => {
    const out = run();
    expect(out.stderr).toBe('');
    expect(out.stdout).toBe('hello there\n');
    expect(fs.existsSync(entry())).toBe(true);
  });

  it('does not compile again while the build is current', () => {
    const builtAt = fs.statSync(entry()).mtimeMs;
    const out = run();
    expect(out.stdout).toBe('hello there\n');
    expect(fs.statSync(entry()).mtimeMs).toBe(builtAt);
  });

  it('compiles again once a source is newer than the build', () => {
    const source = path.join(project, 'bin/hello.ts');
    fs.writeFileSync(source, fs.readFileSync(source, 'utf8').replace('hello', 'hi'));
    const later = new Date(fs.statSync(entry()).mtimeMs + 2000);
    fs.utimesSync(source, later, later);
    expect(run().stdout).toBe('hi there\n');
  });
});
