// The examples subgraph. Owns the `examples` database; meets other subgraphs only through
// federation references (owner: User) and events (a deleted user's example items go: the kit's
// cascade, in batches).
// What it contributes (its REST routes under /api/v1/examples, in routes.ts; its scopes; its
// settings, in settings.ts) is declared in module.ts, the entry of the module list (subgraphs/index.ts).
import path from 'node:path';
import { migrationsIn } from '../../lib/database/migrations-in';
import { EventConsumerPosition } from '../../lib/event-consumer';
import { JOB_ENTITIES } from '../../lib/kit/jobs';
import { UserCap } from '../../lib/kit/user-caps';
import { jobQueue, userCascade } from '../../lib/kit/user-cascade';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { ExampleItem } from './entities/example-item';
import { ExampleItemService } from './example-item-service';
import { ExampleItemResolver } from './resolvers/example-item-resolver';

export const examplesSubgraph: SubgraphDefinition = {
  name: 'examples',
  entities: [ExampleItem, OutboxEvent, EventConsumerPosition, UserCap, ...JOB_ENTITIES],
  migrations: migrationsIn(path.join(__dirname, 'migrations')),
  create({ config, dataSource, events, logger }) {
    const service = new ExampleItemService(dataSource, config.EXAMPLE_ITEMS_PER_USER);
    // A deleted user's example items go too (auth's user.deleted), a batch per transaction.
    const queue = jobQueue({ config, dataSource, logger });
    const cascade = userCascade({
      module: 'examples',
      dataSource,
      log: events,
      queue,
      config,
      logger,
      batch: service.deleteOwnerBatch,
    });
    return {
      resolvers: [new ExampleItemResolver(service)],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs may point at one; only its owner sees it.
        ExampleItem: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
      async start() {
        queue.start();
        await cascade.start();
      },
      async stop() {
        await cascade.stop();
        await queue.stop();
      },
    };
  },
};
