// The event stream's GraphQL schema: `subscription { events(after, types, scope) }` and the
// stream's position, on the event log that every subgraph's outbox feeds.
import type { GraphQLSchema } from 'graphql';
import { GraphQLJSONObject } from 'graphql-scalars';
import {
  Arg,
  buildSchema,
  Field,
  ID,
  ObjectType,
  Query,
  registerEnumType,
  Resolver,
  Root,
  Subscription,
} from 'type-graphql';
import { AppError } from '../lib/errors';
import type { EventLog } from '../lib/event-log';
import type { EventStream, StreamEvent } from '../lib/event-stream';
import { authChecker } from '../lib/subgraph';
import { RequiresScopes } from '../lib/scopes';
import type { Principal } from '../lib/tokens';
import { accessLost } from './stream-access';

export enum EventScope {
  own = 'own',
  all = 'all',
}
registerEnumType(EventScope, { name: 'EventScope', description: "`all` (every user's events) is for admins." });

@RequiresScopes('events:read')
@ObjectType('Event', { description: 'Something that happened, as written with the change that caused it.' })
class EventType {
  @Field(() => ID, { description: 'Position in the stream; pass as `after` to resume after it.' }) seq!: string;
  @Field(() => ID) eventId!: string;
  @Field({ description: 'session.created, voice.deleted, …' }) type!: string;
  @Field(() => ID, { description: 'The resource the event is about.' }) resourceId!: string;
  @Field(() => ID, { description: 'Whose stream the event belongs to.' }) userId!: string;
  @Field() occurredAt!: Date;
  @Field(() => GraphQLJSONObject, { description: "The resource's useful fields." }) data!: Record<string, unknown>;
}

export interface EventsContext {
  principal: Principal;
  /** The caller's scopes now (the token's, or a newer change in the log). */
  scopes: ReadonlySet<string>;
  /** When the newest scope change `scopes` accounts for happened (ms), if the log has one. */
  scopesChangedAt?: number;
  stream: EventStream;
}

/** The arguments of `events`, as GraphQL hands them to `subscribe` (coerced, `scope` defaulted). */
interface EventsArgs {
  after?: unknown;
  types?: string[] | null;
  scope?: EventScope;
}

/** `after` is a sequence number given back as an ID. */
function position(after: unknown): number | undefined {
  if (after === undefined || after === null) return undefined;
  if (typeof after !== 'string' || !/^\d{1,15}$/.test(after))
    throw new AppError('validation_error', 'after must be a stream position (seq).', {
      after: ['is not a stream position'],
    });
  return Number(after);
}

@Resolver()
class EventsResolver {
  constructor(private readonly log: EventLog) {}

  @RequiresScopes('events:read')
  @Query(() => ID, { description: 'The newest position of the event stream.' })
  async eventStreamPosition(): Promise<string> {
    return String((await this.log.position()).lastSeq);
  }

  @RequiresScopes('events:read')
  @Subscription(() => EventType, {
    description:
      "The caller's events as they happen, after `after` when given (no gap, no duplicate), filtered by `types`. " +
      "Ends when the caller's session is revoked; with `forbidden` when the caller loses `events:read` (or " +
      '`admin:users` for `scope: all`), `unauthorized` when the account is disabled; `resync_required` when ' +
      '`after` is older than what is kept.',
    subscribe: async ({ args, context }: { args: EventsArgs; context: EventsContext }) => {
      const { principal, scopes, stream } = context;
      const after = position(args.after);
      // An argument's need, which a directive on the field cannot say: the contract's table.
      if (args.scope === EventScope.all && !scopes.has('admin:users'))
        throw new AppError('forbidden', "Following every user's events needs the scope admin:users.");
      await stream.checkResumable(after);
      return stream.subscribe({
        userId: args.scope === EventScope.all ? null : principal.userId,
        after,
        types: args.types ?? undefined,
        endAfter: (e) => e.type === 'session.revoked' && e.resourceId === principal.sessionId,
        refuse: accessLost({
          principal,
          needs: args.scope === EventScope.all ? ['events:read', 'admin:users'] : ['events:read'],
          knownChangeAt: context.scopesChangedAt,
        }),
      });
    },
  })
  events(
    @Root() event: StreamEvent,
    @Arg('after', () => ID, { nullable: true }) _after?: string,
    @Arg('types', () => [String], { nullable: true }) _types?: string[],
    @Arg('scope', () => EventScope, { defaultValue: EventScope.own }) _scope?: EventScope,
  ): EventType {
    return { ...event, seq: String(event.seq) };
  }
}

/** The schema /graphql/stream serves, its resolvers on `log`. */
export function buildEventsSchema(log: EventLog): Promise<GraphQLSchema> {
  const resolver = new EventsResolver(log);
  return buildSchema({
    resolvers: [EventsResolver],
    container: { get: () => resolver },
    authChecker,
    // type-graphql insists on a PubSub, but the subscription here brings its own `subscribe`
    // (the event stream), so topics are never used.
    pubSub: {
      publish: () => {
        throw new Error('events are published through the outbox, not a PubSub');
      },
      subscribe: () => {
        throw new Error('subscribe to the event stream instead');
      },
    },
  });
}
