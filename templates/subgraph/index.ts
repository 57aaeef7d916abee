// The examples subgraph. Owns the `examples` database; meets other subgraphs only through
// federation references (owner: User) and events.
// Its REST routes (under /api/v1/examples) are declared in routes.ts, listed in subgraphs/routes.ts.
import { UserCap } from '../../lib/kit/user-caps';
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { UserReference } from '../../lib/user-reference';
import { ExampleItem } from './entities/example-item';
import { ExampleItemService } from './example-item-service';
import { CreateExampleItemTables1700000000000 } from './migrations/1700000000000-CreateExampleItemTables';
import { ExampleItemResolver } from './resolvers/example-item-resolver';

export const examplesSubgraph: SubgraphDefinition = {
  name: 'examples',
  entities: [ExampleItem, OutboxEvent, UserCap],
  migrations: [CreateExampleItemTables1700000000000],
  create({ dataSource }) {
    const service = new ExampleItemService(dataSource);
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
    };
  },
};
