// `npm run compose`: composes the supergraph from the subgraphs in this build (SUBGRAPHS, or
// all) and writes its SDL to SUPERGRAPH_PATH (default ./supergraph.graphql) for the gateway
// of the distributed mode. Fails, in plain words, when the schemas do not compose.
//
//   npm run compose                          compose and write
//   npm run compose -- --check               compose only
//   npm run compose -- --with partner=p.graphql   also compose a subgraph given as an SDL file
//
// Each subgraph's schema comes from its code: it is started for a moment on a throwaway
// SQLite folder, so what is composed is exactly what would run.
import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { printSubgraphSchema } from '@apollo/subgraph';
import { composeSupergraph, CompositionError, SubgraphSdl } from '../gateway/compose';
import { ConfigError, loadConfig } from '../lib/config';
import { createLogger } from '../lib/logger';
import { EventLog } from '../lib/event-log';
import { startSubgraph } from '../lib/subgraph';
import { loadKeys } from '../lib/tokens';
import { selectSubgraphs } from '../subgraphs';

interface Options {
  check: boolean;
  extra: { name: string; file: string }[];
}

function parseArgs(argv: string[]): Options {
  const options: Options = { check: false, extra: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') options.check = true;
    else if (arg === '--with' && argv[i + 1]?.includes('=')) {
      const [name, file] = argv[++i].split('=');
      options.extra.push({ name, file });
    } else
      throw new ConfigError(
        `unknown argument "${arg}"; usage: npm run compose -- [--check] [--with name=schema.graphql]`,
      );
  }
  return options;
}

/** The SDLs of this build's subgraphs, each printed from a briefly started instance. */
export async function buildSubgraphSdls(names: string[]): Promise<SubgraphSdl[]> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'compose-'));
  const config = loadConfig({ DATA_DIR: scratch, DATABASE_URL: 'sqlite', LOG_LEVEL: 'silent' });
  const logger = createLogger(config);
  const keys = loadKeys(config);
  const events = await EventLog.open(config);
  try {
    const sdls: SubgraphSdl[] = [];
    for (const def of await selectSubgraphs(names)) {
      const running = await startSubgraph(def, { config, logger, keys, events });
      sdls.push({ name: def.name, url: placeholderUrl(def.name), sdl: printSubgraphSchema(running.schema) });
      await running.stop();
    }
    return sdls;
  } finally {
    await events.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

// The gateway takes each subgraph's address from SUBGRAPH_URLS at run time, so one
// supergraph file serves every deployment.
const placeholderUrl = (name: string) => `http://${name}.subgraph.invalid/graphql`;

async function main(): Promise<number> {
  const config = loadConfig();
  const options = parseArgs(process.argv.slice(2));
  const sdls = await buildSubgraphSdls(config.SUBGRAPHS);
  for (const { name, file } of options.extra)
    sdls.push({ name, url: placeholderUrl(name), sdl: fs.readFileSync(file, 'utf8') });
  const names = sdls.map((s) => s.name).join(', ');
  try {
    const supergraph = composeSupergraph(sdls);
    if (options.check) {
      console.log(`The subgraphs ${names} compose.`);
      return 0;
    }
    const out = path.resolve(config.SUPERGRAPH_PATH ?? 'supergraph.graphql');
    // Write then rename, so that a gateway watching the file never reads half of it.
    fs.writeFileSync(`${out}.tmp`, supergraph);
    fs.renameSync(`${out}.tmp`, out);
    console.log(`The subgraphs ${names} compose; supergraph written to ${out}`);
    return 0;
  } catch (err) {
    if (err instanceof CompositionError) {
      console.error(`The subgraphs ${names} do not compose:\n${err.problems.map((p) => `  - ${p}`).join('\n')}`);
      return 1;
    }
    throw err;
  }
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err instanceof ConfigError || err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
