// The vault subgraph: links, texts and files a user captures, enriched in the background
// (behind the SSRF guard) and classified (rules, a learned classifier, keywords). Owns the
// `vault` database; meets other subgraphs only through federation references and events.
// Its REST routes (under /api/v1/vault) are declared in routes.ts, handed to the facade by module.ts.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import { openBlobStore } from '../../lib/blob-store';
import { vaultDir } from './settings';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { declareExpensiveFields, sharedExpensiveGate } from '../../lib/kit/expensive';
import { sharedExpensiveReads } from '../../lib/kit/expensive-reads';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { UserCap } from '../../lib/kit/user-caps';
import { jobQueue } from '../../lib/kit/user-cascade';
import { addVaultItemsSource } from './metrics';
import { OutboxEvent } from '../../lib/outbox';
import { guardedAgent } from '../../lib/ssrf-guard';
import type { SubgraphContext, SubgraphDefinition, SubgraphDeps } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { hubCaptureConsumer, userDeletionConsumer } from './consumers';
import { VaultWorker } from './enrichment-worker';
import { VaultItem } from './entities/vault-item';
import { VaultClassifier } from './entities/vault-classifier';
import { VaultItemTag } from './entities/vault-item-tag';
import { VaultRule } from './entities/vault-rule';
import { PurgeParams, requestEmptyTrash, TrashRetention } from '../../lib/kit/trash';
import { PageParser } from './parser-thread';
import { VaultContentResolver, VaultItemResolver, VaultRuleResolver } from './resolvers/vault-resolver';
import { VaultCapture } from './capture';
import { VaultTrash } from './item-trash';
import { VaultCaps, VaultLimits } from './limits';
import { Predictors } from './predictors';
import { VaultRules } from './rule-service';
import { VaultService } from './vault-service';

/** The vault's parts, on one database and blob store: items, capture, trash, rules, caps, learned models. */
function vaultParts({ config, dataSource }: SubgraphDeps) {
  const store = openBlobStore(config, 'vault', vaultDir(config));
  const limits: VaultLimits = {
    maxFileBytes: config.VAULT_MAX_FILE_BYTES,
    textMaxChars: config.VAULT_TEXT_MAX_CHARS,
    itemsPerUser: config.VAULT_ITEMS_PER_USER,
    fileBytesPerUser: config.VAULT_FILE_BYTES_PER_USER,
    pendingPerUser: config.VAULT_PENDING_PER_USER,
    rulesPerUser: config.VAULT_RULES_PER_USER,
    minConfidence: config.VAULT_CLASSIFY_MIN_CONFIDENCE,
    keywordTags: config.VAULT_KEYWORD_TAGS,
    searchMaxTerms: config.SEARCH_MAX_TERMS,
    searchCandidates: config.SEARCH_CANDIDATES,
    expensive: sharedExpensiveGate(config),
    reads: sharedExpensiveReads(config),
    trashRetentionDays: config.TRASH_RETENTION_DAYS,
  };
  const caps = new VaultCaps(dataSource, limits);
  const trash = new VaultTrash(dataSource, store, caps, config.TRASH_RETENTION_DAYS);
  const rules = new VaultRules(dataSource, caps);
  const predictors = new Predictors(dataSource);
  const items = new VaultService(dataSource, store, limits, { caps, trash, rules, predictors });
  return { items, capture: new VaultCapture(dataSource, store, limits, caps), trash, rules, caps, predictors };
}

type VaultParts = ReturnType<typeof vaultParts>;

const VAULT_TRASH_PURGE = 'vault.trash_purge';

/** The enrichment worker; `resolve` replaces the system resolver (tests). */
export function vaultWorker(deps: SubgraphDeps, vault: VaultParts, concurrency: number) {
  const { config, dataSource, logger } = deps;
  return new VaultWorker({
    dataSource,
    caps: vault.caps,
    rules: vault.rules,
    predictors: vault.predictors,
    store: openBlobStore(config, 'vault', vaultDir(config)),
    dispatcher: guardedAgent({
      allowHosts: config.VAULT_FETCH_ALLOW_HOSTS,
      resolve: (host) =>
        vaultResolver.resolve ? vaultResolver.resolve(host) : dns.promises.lookup(host, { all: true, verbatim: true }),
    }),
    parser: new PageParser(
      config.VAULT_PARSE_TIMEOUT_MS,
      Math.min(config.VAULT_PARSE_THREADS, Math.max(1, concurrency)),
    ),
    logger,
    concurrency,
    leaseSeconds: config.VAULT_ENRICH_LEASE_SECONDS,
    maxAttempts: config.VAULT_ENRICH_MAX_ATTEMPTS,
    pollMs: config.VAULT_ENRICH_POLL_MS,
    maxPollMs: config.POLL_MAX_IDLE_MS,
    fetch: {
      maxBytes: config.VAULT_FETCH_MAX_BYTES,
      timeoutMs: config.VAULT_FETCH_TIMEOUT_MS,
      maxRedirects: config.VAULT_FETCH_MAX_REDIRECTS,
    },
    textMaxChars: config.VAULT_TEXT_MAX_CHARS,
    minConfidence: config.VAULT_CLASSIFY_MIN_CONFIDENCE,
    keywordTags: config.VAULT_KEYWORD_TAGS,
  });
}

/** Name resolution of the fetcher: the system's unless a test stubs it (a name that resolves to loopback). */
export const vaultResolver: { resolve?: (hostname: string) => Promise<LookupAddress[]> } = {};

export const vaultSubgraph: SubgraphDefinition = {
  name: 'vault',
  entities: [
    VaultItem,
    VaultItemTag,
    VaultRule,
    VaultClassifier,
    UserCap,
    ...JOB_ENTITIES,
    OutboxEvent,
    EventConsumerPosition,
  ],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create(deps) {
    const { config, dataSource, logger, events } = deps;
    const vault = vaultParts(deps);
    declareExpensiveFields([{ type: 'Query', field: 'vaultItems', whenArgument: 'q', kind: 'search' }]);
    const worker =
      config.VAULT_ENRICH_CONCURRENCY > 0 ? vaultWorker(deps, vault, config.VAULT_ENRICH_CONCURRENCY) : undefined;
    const consumerOptions = {
      dataSource,
      log: events,
      intervalMs: config.EVENT_POLL_MS,
      maxIntervalMs: config.POLL_MAX_IDLE_MS,
      logger,
    };
    // A deleted user's items, files, rules and model: the kit's cascade, in batches.
    const queue = jobQueue({ config, dataSource, logger });
    const deletions = userDeletionConsumer({
      ...consumerOptions,
      queue,
      config,
      store: openBlobStore(config, 'vault', vaultDir(config)),
    });
    const hubCaptures = hubCaptureConsumer({ ...consumerOptions, capture: vault.capture });
    // The trash's purges (by retention, or an emptied trash), in batches on the same queue.
    queue.register<PurgeParams>({ kind: VAULT_TRASH_PURGE, batch: vault.trash.purgeBatch });
    const retention = new TrashRetention({
      dataSource,
      queue,
      kind: VAULT_TRASH_PURGE,
      entity: VaultItem,
      retentionDays: config.TRASH_RETENTION_DAYS,
      logger,
    });
    vault.trash.onTrashed = (at) => retention.trashed(at);
    let stopReporting: (() => void) | undefined;
    return {
      resolvers: [
        new VaultItemResolver(vault.items, vault.capture, vault.trash, (ownerId) =>
          requestEmptyTrash(queue, VAULT_TRASH_PURGE, ownerId),
        ),
        new VaultContentResolver(vault.items, config.GRAPHQL_MAX_AUDIO_BYTES),
        new VaultRuleResolver(vault.rules),
      ],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs (hubs) point at items; only the owner sees one, anyone else gets null.
        VaultItem: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? vault.items.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        stopReporting = addVaultItemsSource(async () => {
          const rows: { state: string; n: string | number }[] = await dataSource
            .createQueryBuilder(VaultItem, 'i')
            .select('i.state', 'state')
            .addSelect('COUNT(*)', 'n')
            .groupBy('i.state')
            .getRawMany();
          return rows.map((r) => ({ labels: { state: r.state }, value: Number(r.n) }));
        });
        queue.start();
        await deletions.start();
        await hubCaptures.start();
        worker?.start();
        await retention.start();
      },
      async stop() {
        retention.stop();
        stopReporting?.();
        await deletions.stop();
        await hubCaptures.stop();
        await queue.stop();
        await worker?.stop();
      },
    };
  },
  // `npm run start:worker -- vault`: enrichment only, beside subgraph processes run with VAULT_ENRICH_CONCURRENCY=0.
  worker(deps) {
    const worker = vaultWorker(deps, vaultParts(deps), Math.max(1, deps.config.VAULT_ENRICH_CONCURRENCY));
    worker.start();
    return { stop: () => worker.stop() };
  },
};
