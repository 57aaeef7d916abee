// `npm run bench [-- scenario …]`: runs the named scenarios (default: all) and prints tables.
import 'reflect-metadata';
import { ensureBenchTools } from './tools';

const scenarios: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  auth: () => import('./auth'),
  tts: () => import('./tts'),
  events: () => import('./events'),
  synthesis: () => import('./synthesis'),
  fairness: () => import('./fairness'),
  distributed: () => import('./distributed'),
  ops: () => import('./ops'),
  ceiling: () => import('./ceiling'),
  gateways: () => import('./gateways'),
  observability: () => import('./observability'),
  abuse: () => import('./abuse'),
  speech: () => import('./speech'),
  cpu: () => import('./cpu'),
  idle: () => import('./idle'),
  hubs: () => import('./hubs'),
  webhooks: () => import('./webhooks'),
  notes: () => import('./notes'),
  vault: () => import('./vault'),
  starvation: () => import('./starvation'),
  fanout: () => import('./fanout'),
  import: () => import('./import'),
};

async function main() {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const chosen = names.length ? names : Object.keys(scenarios);
  const unknown = chosen.filter((name) => !scenarios[name]);
  if (unknown.length)
    throw new Error(`unknown scenario "${unknown.join('", "')}"; known: ${Object.keys(scenarios).join(', ')}`);
  ensureBenchTools(); // before any scenario starts a server: the first install takes a while
  for (const name of chosen) {
    console.log(`\n## ${name}`);
    await (await scenarios[name]()).run();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
