// A NATS server with JetStream of a test's own (the `nats-server` binary, when installed), on a
// free port with its own store folder, so a test can stop it mid-run and start it again on the
// same port and store without touching the machine's shared NATS at 127.0.0.1:4222.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { freePort } from './processes';
import { until } from './wait';

/** The nats-server binary's path, or undefined when it is not installed. */
export function natsServerBinary(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v nats-server'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : undefined;
}

export interface OwnNatsServer {
  /** host:port */
  address: string;
  /** Ends the server (SIGKILL: as a host lost). */
  stop(): Promise<void>;
  /** Starts it again on the same port and store folder. */
  start(): Promise<void>;
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });

export async function startNatsServer(binary: string, storeDir: string): Promise<OwnNatsServer> {
  fs.mkdirSync(storeDir, { recursive: true });
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], { stdio: 'ignore' });
    const stopGroup = () => child?.kill('SIGKILL');
    process.once('exit', stopGroup);
    await until(() => accepts(port), `nats-server on ${port}`, 15_000, 50);
  };
  await start();
  return {
    address: `127.0.0.1:${port}`,
    start,
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
  };
}
