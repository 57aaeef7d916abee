#!/usr/bin/env node
// `node scripts/built.js bin/users.js …args`: runs dist/<script> with the arguments, building
// first only when a source file (or a tsconfig) is newer than that built file. `npm run users`
// goes through here, so one command takes about a second instead of a full tsc build each time.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');
const [script, ...args] = process.argv.slice(2);
if (!script) {
  console.error('usage: node scripts/built.js <path below dist, e.g. bin/users.js> [args…]');
  process.exit(2);
}
const target = path.join(root, 'dist', script);

/** The newest modification time among the files tsc builds from. */
function newestSource() {
  const { include } = JSON.parse(fs.readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8'));
  let newest = Math.max(
    ...['tsconfig.json', 'tsconfig.build.json'].map((f) => fs.statSync(path.join(root, f)).mtimeMs),
  );
  const walk = (p) => {
    const stat = fs.statSync(p);
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(p)) if (entry !== 'node_modules') walk(path.join(p, entry));
    } else if (p.endsWith('.ts')) newest = Math.max(newest, stat.mtimeMs);
  };
  for (const entry of include) if (fs.existsSync(path.join(root, entry))) walk(path.join(root, entry));
  return newest;
}

const builtAt = fs.existsSync(target) ? fs.statSync(target).mtimeMs : 0;
if (builtAt < newestSource()) {
  const build = spawnSync(
    process.execPath,
    [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.build.json')],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// Run it in this process, as if started directly: one Node start-up, not two. As the main
// module (runMain), so that the entry point's `require.main === module` start holds.
process.argv = [process.argv[0], target, ...args];
require('node:module').runMain();
