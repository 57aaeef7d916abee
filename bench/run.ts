// `npm run bench [-- scenario …]`: runs the named scenarios (default: all) and prints tables.
import 'reflect-metadata';

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
};

async function main() {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  for (const name of names.length ? names : Object.keys(scenarios)) {
    const scenario = scenarios[name];
    if (!scenario) throw new Error(`unknown scenario "${name}"; known: ${Object.keys(scenarios).join(', ')}`);
    console.log(`\n## ${name}`);
    await (await scenario()).run();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
