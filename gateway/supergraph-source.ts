// Where the gateway's supergraph comes from: composed from the subgraphs at start, or a file
// composed ahead of time and watched, whose subgraphs must all have an address here.
import fs from 'node:fs';
import type { SupergraphSdlHook } from '@apollo/gateway';
import { printSubgraphSchema } from '@apollo/subgraph';
import type { Logger } from '../lib/logger';
import type { RunningSubgraph } from '../lib/subgraph';
import { composeSupergraph, fetchSubgraphSdl, SubgraphSdl } from './compose';

/** A subgraph in this process, or one reached over HTTP at its GraphQL URL. */
export type SubgraphEndpoint = { name: string; local: RunningSubgraph } | { name: string; url: string };

const LOCAL_URL = (name: string) => `http://in-process.invalid/${name}`;

const SUPERGRAPH_POLL_MS = 500;

async function subgraphSdls(subgraphs: SubgraphEndpoint[], hopSecret: string | undefined): Promise<SubgraphSdl[]> {
  return Promise.all(
    subgraphs.map((s) =>
      'local' in s
        ? Promise.resolve({ name: s.name, url: LOCAL_URL(s.name), sdl: printSubgraphSchema(s.local.schema) })
        : fetchSubgraphSdl(s.name, s.url, hopSecret),
    ),
  );
}

/**
 * The supergraph from a file, and again whenever the file changes (compose writes it by
 * rename, so a poll never sees half a file). A file that does not load leaves the running
 * supergraph in place.
 */
function watchedSupergraph(file: string, logger: Logger, check: (sdl: string) => void): SupergraphSdlHook {
  const load = (update: (sdl: string) => void) => {
    let current = fs.readFileSync(file, 'utf8');
    check(current);
    const reload = () => {
      let next: string;
      try {
        next = fs.readFileSync(file, 'utf8');
      } catch (err) {
        return logger.error({ err, file }, 'supergraph file unreadable; keeping the loaded one');
      }
      if (next === current) return;
      try {
        check(next);
        update(next);
        current = next;
        logger.info({ file }, 'supergraph reloaded');
      } catch (err) {
        logger.error({ err, file }, 'supergraph file rejected; keeping the loaded one');
      }
    };
    fs.watchFile(file, { interval: SUPERGRAPH_POLL_MS }, reload);
    const cleanup = () => {
      fs.unwatchFile(file, reload);
      return Promise.resolve();
    };
    return { supergraphSdl: current, cleanup };
  };
  // A promise that a file which does not load rejects, as Apollo expects of the hook.
  return ({ update }) => new Promise((resolve) => resolve(load(update)));
}

/** The subgraph names a supergraph SDL joins (`enum join__Graph { AUTH @join__graph(name: "auth", …) }`). */
export function supergraphSubgraphNames(sdl: string): string[] {
  return [...sdl.matchAll(/@join__graph\(\s*name:\s*"([^"]+)"/g)].map((m) => m[1]);
}

/**
 * Every subgraph the supergraph names must have an address here: the file's own URLs are
 * placeholders (one file serves every deployment), never to be contacted.
 */
function checkAddresses(sdl: string, file: string, known: Set<string>): void {
  const missing = supergraphSubgraphNames(sdl).filter((name) => !known.has(name));
  if (missing.length) {
    throw new Error(
      `the supergraph ${file} names the subgraph${missing.length > 1 ? 's' : ''} ${missing.join(', ')} that SUBGRAPH_URLS does not give; add ${missing.map((n) => `${n}=http://…/graphql`).join(',')}`,
    );
  }
}

/**
 * The supergraph for Apollo's gateway: the watched file when there is one (its addresses checked
 * before anything starts), else the subgraphs composed now.
 */
export async function supergraphSource(options: {
  subgraphs: SubgraphEndpoint[];
  supergraphPath?: string;
  hopSecret: string | undefined;
  logger: Logger;
}): Promise<string | SupergraphSdlHook> {
  const { subgraphs, supergraphPath: file, hopSecret, logger } = options;
  if (!file) return composeSupergraph(await subgraphSdls(subgraphs, hopSecret));
  const known = new Set(subgraphs.map((s) => s.name));
  checkAddresses(fs.readFileSync(file, 'utf8'), file, known);
  return watchedSupergraph(file, logger, (sdl) => checkAddresses(sdl, file, known));
}
