// A MariaDB server of its own, for tests and benchmarks that stop and start the database (an
// outage) or need it fresh: its own data folder, port and socket, never the shared server.
// Needs mariadbd and mariadb-install-db (Debian: apt-get install mariadb-server).
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import { freePort } from '../test/helpers/processes';

const MARIADBD = ['/usr/sbin/mariadbd', '/usr/sbin/mysqld'].find((p) => fs.existsSync(p));
const INSTALL_DB = ['/usr/bin/mariadb-install-db', '/usr/bin/mysql_install_db'].find((p) => fs.existsSync(p));

/** Why a private MariaDB cannot run here, or undefined when it can. */
export function privateMariadbMissing(): string | undefined {
  if (!MARIADBD) return 'mariadbd is not installed (apt-get install mariadb-server)';
  if (!INSTALL_DB) return 'mariadb-install-db is not installed (apt-get install mariadb-server)';
  return undefined;
}

export interface PrivateMariadb {
  port: number;
  /** mysql://root@127.0.0.1:<port> */
  url: string;
  running(): boolean;
  /** Stops the server (SIGTERM, as an operator or orchestrator would) and waits until it has exited. */
  stop(): Promise<void>;
  /** Starts it again on the same data and port; resolves once it answers. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

export async function startPrivateMariadb(): Promise<PrivateMariadb> {
  const missing = privateMariadbMissing();
  if (missing) throw new Error(missing);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fav-mariadb-'));
  const datadir = path.join(dir, 'data');
  const installed = spawnSync(
    INSTALL_DB!,
    [
      '--no-defaults',
      `--datadir=${datadir}`,
      '--user=root',
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
    ],
    { encoding: 'utf8' },
  );
  if (installed.status !== 0) throw new Error(`mariadb-install-db failed: ${installed.stderr || installed.stdout}`);
  const port = await freePort();
  const url = `mysql://root@127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const answers = async () => {
    try {
      const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 1000 });
      await conn.end();
      return true;
    } catch {
      return false;
    }
  };

  async function start(): Promise<void> {
    child = spawn(
      MARIADBD!,
      [
        '--no-defaults',
        `--datadir=${datadir}`,
        `--port=${port}`,
        '--bind-address=127.0.0.1',
        `--socket=${path.join(dir, 'sock')}`,
        `--pid-file=${path.join(dir, 'pid')}`,
        '--user=root',
        `--log-error=${path.join(dir, 'error.log')}`,
        '--skip-log-bin',
        '--skip-name-resolve',
        '--innodb-buffer-pool-size=64M',
        '--max-connections=500',
      ],
      { stdio: 'ignore' },
    );
    const proc = child;
    exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + 60_000;
    while (!(await answers())) {
      if (proc.exitCode !== null)
        throw new Error(
          `mariadbd exited with ${proc.exitCode}: ${fs.readFileSync(path.join(dir, 'error.log'), 'utf8').slice(-2000)}`,
        );
      if (Date.now() > deadline) throw new Error('mariadbd did not answer within 60 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function stop(): Promise<void> {
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const force = setTimeout(() => child?.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(force);
    }
  }

  await start();
  return {
    port,
    url,
    running: () => !!child && child.exitCode === null && child.signalCode === null,
    stop,
    start,
    async destroy() {
      await stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
