#!/usr/bin/env node
// `npm test`: the suite on SQLite, and on MySQL when one is reachable at MYSQL_TEST_URL
// (default mysql://root@127.0.0.1:3306). The URL's path prefixes the test databases' names
// (mysql://…:3306/ci → ci_<random>_auth; default t_…: test/helpers/mysql-test-url.ts). In CI
// (CI=true) or with REQUIRE_MYSQL=1 an unreachable MySQL is a failure, not a skip. Ends with the line "N passed, N failed".
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const mysqlUrl = new URL(process.env.MYSQL_TEST_URL || 'mysql://root@127.0.0.1:3306');
const requireMysql = process.env.CI === 'true' || process.env.REQUIRE_MYSQL === '1';

function reachable(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port, timeout: 2000 }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

const started = process.hrtime.bigint();
const seconds = (from, to = process.hrtime.bigint()) => Number(to - from) / 1e9;
const npmRun = (script) =>
  spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', script, '--silent'], { stdio: 'inherit' });

(async () => {
  const argv = process.argv.slice(2);
  const build = argv.includes('--build');
  let buildSeconds = 0;
  if (build) {
    // `npm test`: the built files (spawned processes run dist/) and the type check of sources and tests.
    for (const script of ['build', 'typecheck']) {
      const step = npmRun(script);
      if (step.status !== 0) {
        console.log(`0 passed, 1 failed (npm run ${script} failed)`);
        process.exit(step.status ?? 1);
      }
    }
    buildSeconds = seconds(started);
  }
  const mysqlUp = await reachable(mysqlUrl.hostname, Number(mysqlUrl.port || 3306));
  if (!mysqlUp && requireMysql) {
    console.error(`MySQL is required here but ${mysqlUrl.host} does not answer.`);
    process.exit(1);
  }
  const projects = mysqlUp ? ['sqlite', 'mysql'] : ['sqlite'];
  if (mysqlUp)
    console.log(
      `MySQL at ${mysqlUrl.host}; test databases are named ${mysqlUrl.pathname.slice(1) || 't'}_<random>_<database>.`,
    );
  if (!mysqlUp) console.warn(`MySQL not reachable at ${mysqlUrl.host}: running the SQLite pass only.`);
  const results = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jest-')), 'results.json');
  const jestArgs = argv.filter((a) => a !== '--build');
  const args = ['--selectProjects', ...projects, '--json', `--outputFile=${results}`, ...jestArgs];
  const jestStarted = process.hrtime.bigint();
  const run = spawnSync(process.execPath, [require.resolve('jest/bin/jest'), ...args], { stdio: 'inherit' });
  try {
    const r = JSON.parse(fs.readFileSync(results, 'utf8'));
    console.log(
      `${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped (per-file times: ${results})`,
    );
  } catch {
    console.log('0 passed, 1 failed');
  }
  const jestSeconds = seconds(jestStarted);
  console.log(
    `Wall time: ${seconds(started).toFixed(0)} s` +
      (build
        ? ` (build and type check ${buildSeconds.toFixed(0)} s, jest ${jestSeconds.toFixed(0)} s)`
        : ` (jest ${jestSeconds.toFixed(0)} s)`) +
      ` on ${os.cpus().length} cores, load average ${os.loadavg()[0].toFixed(1)} at the end, ${new Date().toISOString()}.`,
  );
  process.exit(run.status ?? 1);
})();
