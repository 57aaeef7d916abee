// The transfer subgraph: imports (and, next, exports) as background jobs. Owns the `transfer`
// database and the uploaded files (the blob store, TRANSFER_DIR); creates the user's data only
// through the other modules' own GraphQL mutations, via the gateway, as the user
// (import-runner.ts), and meets other subgraphs otherwise only through events (a deleted user's
// jobs go: the kit's cascade, in batches). What it contributes (REST routes, scopes) is declared
// in module.ts.
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { openBlobStore } from '../../lib/blob-store';
import { transferDir } from './settings';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { UserCap } from '../../lib/kit/user-caps';
import { jobQueue, userCascade } from '../../lib/kit/user-cascade';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { TokenSigner } from '../../lib/tokens';
import { ImportSource } from './entities/import-source';
import { TransferJob } from './entities/transfer-job';
import { exportHandler } from './export-runner';
import { importHandler } from './import-runner';
import { ExportFileResolver, TransferResolver } from './resolvers/transfer-resolver';
import { TransferService } from './transfer-service';

export const transferSubgraph: SubgraphDefinition = {
  name: 'transfer',
  entities: [TransferJob, ImportSource, OutboxEvent, EventConsumerPosition, UserCap, ...JOB_ENTITIES],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create({ config, dataSource, events, logger, keys, gateway }) {
    const store = openBlobStore(config, 'transfer', transferDir(config)); // uploads and export zips: BLOB_STORE_URL or TRANSFER_DIR
    const queue = jobQueue({ config, dataSource, logger });
    const service = new TransferService(dataSource, store, queue, {
      maxBytes: config.IMPORT_MAX_BYTES,
      exportDays: config.EXPORT_RETENTION_DAYS,
    });
    let signer: TokenSigner | null | undefined;
    const signerOf = () => (signer ??= keys.privateKey ? new TokenSigner(keys, config.JWT_ISSUER) : null);
    queue.register(
      importHandler({
        dataSource,
        store,
        gateway,
        config,
        logger,
        // Made on first use: a process without the private key fails imports with a clear error.
        signer: signerOf,
      }),
    );
    queue.register(exportHandler({ dataSource, store, gateway, signer: signerOf }));
    const cascade = userCascade({
      module: 'transfer',
      dataSource,
      log: events,
      queue,
      config,
      logger,
      batch: service.deleteOwnerBatch,
    });
    // Uploads never finished and imports whose runner kept dying: swept now and then.
    let sweeper: NodeJS.Timeout | undefined;
    const sweep = () =>
      void service
        .sweep(config.IMPORT_STALE_SECONDS)
        .catch((err: unknown) => logger.warn({ err }, 'import sweep failed'));
    return {
      resolvers: [new TransferResolver(service), new ExportFileResolver(service)],
      references: {
        TransferJob: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        queue.start();
        await cascade.start();
        sweeper = setInterval(sweep, Math.min(config.IMPORT_STALE_SECONDS * 1000, 10 * 60_000) / 2);
        sweeper.unref();
      },
      async stop() {
        clearInterval(sweeper);
        await cascade.stop();
        await queue.stop();
      },
    };
  },
};
