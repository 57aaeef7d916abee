// `npm run new-subgraph -- <name> [--entity <Type>]`: a working subgraph skeleton for a partner
// team — entity, resolver, migration and service in subgraphs/<name>/, a test in test/<name>/ —
// registered in subgraphs/index.ts. It composes and passes its test as generated; the team
// then grows it. Templates are plain strings here so that what is generated is easy to read.
import fs from 'node:fs';
import path from 'node:path';

export interface SkeletonNames {
  /** Subgraph and database name: `reviews`. */
  name: string;
  /** GraphQL and TypeORM entity: `Review`. */
  entity: string;
  /** `review`, for fields and files. */
  camel: string;
  /** `review-resolver.ts`… */
  kebab: string;
  /** Table: `reviews`. */
  table: string;
}

export function skeletonNames(name: string, entity?: string): SkeletonNames {
  if (!/^[a-z][a-z0-9]{1,29}$/.test(name)) {
    throw new Error(`"${name}" is not a subgraph name: 2–30 lower-case letters and digits, starting with a letter`);
  }
  const type = entity ?? name[0].toUpperCase() + name.slice(1).replace(/s$/, '');
  if (!/^[A-Z][A-Za-z0-9]{1,39}$/.test(type)) throw new Error(`"${type}" is not an entity name: PascalCase letters and digits`);
  const kebab = type.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
  return { name, entity: type, camel: type[0].toLowerCase() + type.slice(1), kebab, table: `${kebab.replace(/-/g, '_')}s` };
}

export function skeletonFiles(n: SkeletonNames, timestamp: number): Record<string, string> {
  const migration = `Create${n.entity}Tables${timestamp}`;
  const dir = `subgraphs/${n.name}`;
  return {
    [`${dir}/entities/${n.kebab}.ts`]: `import { Directive, Field, ID, ObjectType } from 'type-graphql';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

@Directive('@key(fields: "id")')
@ObjectType({ description: 'A ${n.camel} of the ${n.name} subgraph. Describe what it is here.' })
@Entity('${n.table}')
export class ${n.entity} {
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  /** The user who owns it; the gateway resolves \`owner\` from the auth subgraph. */
  @Index()
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field()
  @Column({ type: 'varchar', length: 200 })
  title!: string;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;
}
`,
    [`${dir}/entities/user-reference.ts`]: `import { Directive, Field, ID, ObjectType } from 'type-graphql';

/** The auth subgraph's User, known here only by its key; the gateway fetches the rest. */
@Directive('@key(fields: "id", resolvable: false)')
@ObjectType('User')
export class UserReference {
  @Field(() => ID)
  id!: string;
}
`,
    [`${dir}/${n.name}-service.ts`]: `// The ${n.name} module's rules. Every change and its event are written in one transaction.
import crypto from 'node:crypto';
import type { DataSource } from 'typeorm';
import { inTransaction } from '../../lib/database/transactions';
import { AppError } from '../../lib/errors';
import { recordEvent } from '../../lib/outbox';
import { ${n.entity} } from './entities/${n.kebab}';

export class ${n.entity}Service {
  constructor(private readonly dataSource: DataSource) {}

  create(ownerId: string, title: string): Promise<${n.entity}> {
    const item = this.dataSource.manager.create(${n.entity}, { id: crypto.randomUUID(), ownerId, title, createdAt: new Date() });
    return inTransaction(this.dataSource, async (m) => {
      await m.insert(${n.entity}, item);
      await recordEvent(m, { type: '${n.camel}.created', userId: ownerId, resourceId: item.id, data: { title } });
      return item;
    });
  }

  /** Another user's ${n.camel} is \`not_found\`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<${n.entity}> {
    const item = await this.dataSource.manager.findOneBy(${n.entity}, { id, ownerId });
    if (!item) throw new AppError('not_found', 'No such ${n.camel}.');
    return item;
  }

  list(ownerId: string): Promise<${n.entity}[]> {
    return this.dataSource.manager.find(${n.entity}, { where: { ownerId }, order: { createdAt: 'ASC', id: 'ASC' }, take: 100 });
  }
}
`,
    [`${dir}/resolvers/${n.kebab}-resolver.ts`]: `import { IsUUID, MaxLength, MinLength } from 'class-validator';
import { Args, ArgsType, Authorized, Ctx, Field, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { SubgraphContext } from '../../../lib/subgraph';
import { ${n.entity} } from '../entities/${n.kebab}';
import { UserReference } from '../entities/user-reference';
import { ${n.entity}Service } from '../${n.name}-service';

@ArgsType()
class Create${n.entity}Args {
  @Field()
  @MinLength(1)
  @MaxLength(200)
  title!: string;
}

@ArgsType()
class ${n.entity}Args {
  @Field(() => ID)
  @IsUUID()
  id!: string;
}

@Resolver(() => ${n.entity})
export class ${n.entity}Resolver {
  constructor(private readonly service: ${n.entity}Service) {}

  @Authorized()
  @Mutation(() => ${n.entity})
  create${n.entity}(@Args() { title }: Create${n.entity}Args, @Ctx() ctx: SubgraphContext): Promise<${n.entity}> {
    return this.service.create(ctx.principal!.userId, title);
  }

  @Authorized()
  @Query(() => ${n.entity}, { description: "One of the caller's ${n.camel}s." })
  ${n.camel}(@Args() { id }: ${n.entity}Args, @Ctx() ctx: SubgraphContext): Promise<${n.entity}> {
    return this.service.get(ctx.principal!.userId, id);
  }

  @Authorized()
  @Query(() => [${n.entity}], { description: "The caller's ${n.camel}s, oldest first." })
  ${n.camel}s(@Ctx() ctx: SubgraphContext): Promise<${n.entity}[]> {
    return this.service.list(ctx.principal!.userId);
  }

  @FieldResolver(() => UserReference, { description: 'Resolved by the auth subgraph through the gateway.' })
  owner(@Root() item: ${n.entity}): UserReference {
    return { id: item.ownerId };
  }
}
`,
    [`${dir}/migrations/${timestamp}-Create${n.entity}Tables.ts`]: `import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { columns } from '../../../lib/database/portable';
import { createOutboxTable } from '../../../lib/outbox';

// columns() keeps one migration portable between SQLite and MySQL.
export class ${migration} implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    const c = columns(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: '${n.table}',
        columns: [c.uuid('id', { isPrimary: true }), c.uuid('owner_id'), c.string('title', 200), c.timestamp('created_at')],
        indices: [{ columnNames: ['owner_id'] }],
      }),
    );
    // Events are written here, in the same transaction as the change, then relayed to the stream.
    await createOutboxTable(queryRunner);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('outbox');
    await queryRunner.dropTable('${n.table}');
  }
}
`,
    [`${dir}/index.ts`]: `// The ${n.name} subgraph. Owns the \`${n.name}\` database; meets other subgraphs only through
// federation references (owner: User) and events.
import { OutboxEvent } from '../../lib/outbox';
import type { SubgraphContext, SubgraphDefinition } from '../../lib/subgraph';
import { ${n.entity} } from './entities/${n.kebab}';
import { UserReference } from './entities/user-reference';
import { ${migration} } from './migrations/${timestamp}-Create${n.entity}Tables';
import { ${n.entity}Service } from './${n.name}-service';
import { ${n.entity}Resolver } from './resolvers/${n.kebab}-resolver';

export const ${n.name}Subgraph: SubgraphDefinition = {
  name: '${n.name}',
  entities: [${n.entity}, OutboxEvent],
  migrations: [${migration}],
  create({ dataSource }) {
    const service = new ${n.entity}Service(dataSource);
    return {
      resolvers: [new ${n.entity}Resolver(service)],
      orphanedTypes: [UserReference],
      references: {
        // Other subgraphs may point at a ${n.camel}; only its owner sees it.
        ${n.entity}: {
          __resolveReference: (ref: { id: string }, ctx: SubgraphContext) =>
            ctx.principal ? service.get(ctx.principal.userId, ref.id).catch(() => null) : null,
        },
      },
    };
  },
};
`,
    [`test/${n.name}/${n.name}.test.ts`]: `// The ${n.name} subgraph through the gateway, on SQLite and on MySQL.
import { api, createUserAndLogin, login } from '../helpers/http';
import { ADMIN, startTestServer, TestServer } from '../helpers/server';

let server: TestServer;
let http: ReturnType<typeof api>;
let token: string;

beforeAll(async () => {
  server = await startTestServer();
  http = api(server.url);
  token = (await login(server.url, ADMIN)).access_token;
});
afterAll(() => server.close());

const CREATE = 'mutation ($t: String!) { create${n.entity}(title: $t) { id title owner { id username } } }';

describe('${n.name}', () => {
  it('creates a ${n.camel} whose owner the gateway resolves from the auth subgraph', async () => {
    const res = await http.graphql(CREATE, { t: 'first' }, token);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.create${n.entity}).toMatchObject({ title: 'first', owner: { username: ADMIN.username } });
    const list = await http.graphql('{ ${n.camel}s { id title } }', {}, token);
    expect(list.body.data.${n.camel}s).toContainEqual({ id: res.body.data.create${n.entity}.id, title: 'first' });
  });

  it('needs a token, validates its input, and hides one user\\'s ${n.camel}s from another', async () => {
    expect((await http.graphql(CREATE, { t: 'x' })).body.errors[0].extensions.code).toBe('unauthorized');
    expect((await http.graphql(CREATE, { t: '' }, token)).body.errors[0].extensions.code).toBe('validation_error');
    const mine = (await http.graphql(CREATE, { t: 'private' }, token)).body.data.create${n.entity}.id;
    const other = await createUserAndLogin(server.url, token, '${n.name}-other');
    const read = await http.graphql('query ($id: ID!) { ${n.camel}(id: $id) { id } }', { id: mine }, other.token);
    expect(read.body.errors[0].extensions.code).toBe('not_found');
    expect((await http.graphql('{ ${n.camel}s { id } }', {}, other.token)).body.data.${n.camel}s).toEqual([]);
  });
});
`,
  };
}

/** Adds the subgraph to subgraphs/index.ts, the list the entry points read. */
export function registerSubgraph(indexSource: string, n: SkeletonNames): string {
  const importLine = `import { ${n.name}Subgraph } from './${n.name}';\n`;
  const withImport = indexSource.replace(/(import [^\n]+\n)(?![\s\S]*import )/, `$1${importLine}`);
  const withEntry = withImport.replace(/(subgraphDefinitions[^=]*=\s*\{[^}]*?)(\n\};)/, `$1\n  ${n.name}: ${n.name}Subgraph,$2`);
  if (withEntry === withImport || withImport === indexSource) throw new Error('could not add the subgraph to subgraphs/index.ts; add it by hand');
  return withEntry;
}

function main(argv: string[], root: string): number {
  const [name, flag, entity] = argv;
  if (!name || (flag && flag !== '--entity') || (flag && !entity)) {
    console.error('usage: npm run new-subgraph -- <name> [--entity <Type>]');
    return 2;
  }
  const names = skeletonNames(name, entity);
  if (fs.existsSync(path.join(root, 'subgraphs', name))) {
    console.error(`subgraphs/${name} exists already`);
    return 1;
  }
  const files = skeletonFiles(names, Date.now());
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text, { flag: 'wx' });
  }
  const index = path.join(root, 'subgraphs', 'index.ts');
  fs.writeFileSync(index, registerSubgraph(fs.readFileSync(index, 'utf8'), names));
  console.log([`Created the ${name} subgraph:`, ...Object.keys(files).map((f) => `  ${f}`), '  (registered in subgraphs/index.ts)', '',
    'Next: npm run compose -- --check    npm test -- test/' + name].join('\n'));
  return 0;
}

if (require.main === module) {
  try {
    // Run from the project root (npm run sets the working directory to it).
    process.exit(main(process.argv.slice(2), process.cwd()));
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
}
