// SIGTERM sent to npm itself (what `kill %1` or a process manager sends to `npm start`) reaches
// the node server: it stops, and its port is free within 5 s. The npm scripts `exec` node, so
// npm's child is the server itself and npm passes the signal on.
import { ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { freePort } from '../helpers/processes';
import { loadConfig } from '../../lib/config';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const ROOT = path.join(__dirname, '../..');

async function until(probe: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const answers = (port: number) =>
  fetch(`http://127.0.0.1:${port}/health/live`).then(
    (r) => r.ok,
    () => false,
  );

/** True when nothing holds the port any more: this test can listen on it itself. */
const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });

// npm's own arguments: scripts only, no pre-script build (dist/ is built before the tests).
const cases: [string, string[], Record<string, string>][] = [
  ['npm start', ['start', '--ignore-scripts'], {}],
  ['npm run start:facade', ['run', 'start:facade'], { GATEWAY_URL: 'http://127.0.0.1:9' }],
  ['npm run start:worker', ['run', 'start:worker'], {}],
];

describe.each(cases)('%s', (_name, npmArgs, extra) => {
  let npm: ChildProcess | undefined;
  const env = isolatedEnv();
  afterAll(async () => {
    if (npm && npm.exitCode === null) npm.kill('SIGKILL');
    await cleanupDatabases(loadConfig(env));
  });

  it('stops the server when npm gets SIGTERM: the port is free within 5 s', async () => {
    const port = await freePort();
    npm = spawn('npm', npmArgs, {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...env,
        ...extra,
        PORT: String(port),
      },
      stdio: 'ignore',
    });
    expect(await until(() => answers(port), 60_000)).toBe(true);
    const npmExited = new Promise<number | null>((resolve) =>
      npm!.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))),
    );
    npm.kill('SIGTERM');
    const sent = Date.now();
    expect(await until(() => portFree(port), 5000)).toBe(true);
    expect(Date.now() - sent).toBeLessThan(5000);
    // npm reports the child's own exit: 0 after a graceful stop.
    expect(await npmExited).toBe(0);
  }, 90_000);
});
