// Stoplight Prism's validating proxy (`prism proxy`) in front of a live server: every exchange
// through it is checked against the OpenAPI document, and what does not match is reported in the
// answer's `sl-violations` header (a JSON list), the answer itself passed on unchanged.
import { ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './processes';

export interface PrismViolation {
  /** `request…` or `response…`, then where (e.g. `["response", "body", "items"]`). */
  location: string[];
  severity: 'Error' | 'Warning' | 'Information' | 'Hint';
  code?: string | number;
  message: string;
}

export interface PrismProxy {
  url: string;
  close(): Promise<void>;
}

const prismBin = () => {
  const manifest = require.resolve('@stoplight/prism-cli/package.json');
  const { bin } = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return path.join(path.dirname(manifest), bin.prism);
};

/** Starts `prism proxy` over `document` in front of `upstream`; ready when it forwards. */
export async function startPrismProxy(document: unknown, upstream: string, timeoutMs = 60_000): Promise<PrismProxy> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'prism-'));
  const file = path.join(dir, 'openapi.json');
  fs.writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  // Without --errors: a violation is reported, never turned into an error answer of Prism's own.
  const child: ChildProcess = spawn(
    process.execPath,
    [prismBin(), 'proxy', file, upstream, '--port', String(port), '--host', '127.0.0.1', '--verboseLevel', 'error'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}: ${stderr}`);
    if (Date.now() > deadline) {
      await close();
      throw new Error(`prism not ready in ${timeoutMs} ms: ${stderr}`);
    }
    const forwarded = await fetch(`${url}/health/live`).then(
      (r) => r.ok,
      () => false,
    );
    if (forwarded) return { url, close };
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The violations Prism reported for one exchange ([] when none). */
export function violations(headers: Headers): PrismViolation[] {
  const header = headers.get('sl-violations');
  return header ? (JSON.parse(header) as PrismViolation[]) : [];
}
