// The benchmarks' own tools (Hive Gateway, autocannon) are a package of their own,
// bench/package.json with its own lock, so that the project's install stays light and free of
// their warnings. They are installed into bench/node_modules on first use.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/** The source tree's bench/ (where the tools' package is), from the source (bench/) or the build (dist/bench/). */
function benchDir(dir = __dirname): string {
  const candidate = path.join(dir, 'bench');
  if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
  const parent = path.dirname(dir);
  if (parent === dir) throw new Error(`bench/package.json not found above ${__dirname}`);
  return benchDir(parent);
}

export const BENCH_DIR = benchDir();

/** True when bench/node_modules holds each package of bench/package.json at its pinned version. */
export function benchToolsInstalled(): boolean {
  const read = (file: string) =>
    JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string; dependencies: Record<string, string> };
  const wanted = read(path.join(BENCH_DIR, 'package.json')).dependencies;
  return Object.entries(wanted).every(([name, version]) => {
    const installed = path.join(BENCH_DIR, 'node_modules', name, 'package.json');
    return fs.existsSync(installed) && read(installed).version === version;
  });
}

/**
 * `npm --prefix bench ci` unless done; npm's output goes to stderr, away from the bench's tables.
 * `--loglevel=error`: Hive Gateway's own dependencies (@whatwg-node/*, sync-fetch) declare
 * Node >= 22 in `engines`, though Hive Gateway itself declares >= 20 and runs on it (its test,
 * test/gateway/hive-gateway.test.ts, passes on Node 20): those warnings would be noise here.
 */
export function ensureBenchTools(): void {
  if (benchToolsInstalled()) return;
  process.stderr.write('Installing the benchmark tools (bench/package.json) into bench/node_modules, once\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(npm, ['--prefix', BENCH_DIR, 'ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    stdio: ['ignore', 2, 2],
  });
  if (run.status !== 0)
    throw new Error(`npm --prefix ${BENCH_DIR} ci failed (${run.error?.message ?? `exit ${run.status}`})`);
}

/** `require` of a package of bench/package.json, installing them first when needed. */
export function benchRequire(id: string): unknown {
  ensureBenchTools();
  return createRequire(path.join(BENCH_DIR, 'package.json'))(id);
}
