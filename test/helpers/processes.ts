// Child processes of the built entry points (dist/bin), for end-to-end tests: started with
// PORT=0, their address read from their "ready" log line, their logs kept for inspection.
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const BIN = path.join(__dirname, '../../dist/bin');

export interface ServiceProcess {
  name: string;
  url: string;
  /** Every JSON log line so far. */
  logs: Record<string, any>[];
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startProcess(name: string, script: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<ServiceProcess> {
  const child: ChildProcess = spawn(process.execPath, [path.join(BIN, script), ...args], {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, any>[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready in ${timeoutMs} ms: ${stderr}`)), timeoutMs);
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const entry = JSON.parse(line);
          logs.push(entry);
          if (/ready$/.test(entry.msg ?? '') && entry.url) {
            clearTimeout(timer);
            resolve(String(entry.url).replace(/\/graphql$/, ''));
          }
        } catch {
          /* not a log line */
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it was ready: ${stderr}`));
    });
  });
  return {
    name,
    url,
    logs,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
