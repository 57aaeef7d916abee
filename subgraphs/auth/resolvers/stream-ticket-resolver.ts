// Stream tickets: a browser's EventSource cannot send an Authorization header, so a script
// that holds an access token trades it for a ticket that goes into the stream's URL instead.
// The ticket is a short-lived token of its own type (never accepted as an access token),
// bound to the caller's session; the event stream spends it once (lib/event-log.ts).
import { Ctx, Field, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { Authenticated } from '../../../lib/scopes';
import type { SubgraphContext } from '../../../lib/subgraph';
import type { TokenSigner } from '../../../lib/tokens';

@Authenticated()
@ObjectType({ description: 'Opens one event stream without an Authorization header.' })
export class StreamTicket {
  @Field({ description: 'Pass as `ticket` in the stream URL (/api/v1/events or /graphql/stream); single use.' })
  ticket!: string;
  @Field(() => Int, { description: 'Seconds left to open the stream with it.' }) expiresIn!: number;
}

@Resolver()
export class StreamTicketResolver {
  constructor(
    private readonly signer: TokenSigner,
    private readonly ttlSeconds: number,
  ) {}

  @Authenticated()
  @Mutation(() => StreamTicket, {
    description:
      "A single-use ticket, valid for a short while (STREAM_TICKET_TTL_SECONDS, 30 s), that opens an event stream of the caller's session. " +
      'The stream ends when the session is revoked or its access token would have expired.',
  })
  createStreamTicket(@Ctx() ctx: SubgraphContext): StreamTicket {
    const { userId, sessionId, roles, expiresAt } = ctx.principal!;
    const scopes = [...(ctx.scopes ?? [])];
    const { token } = this.signer.sign({ userId, sessionId, roles, scopes }, 'stream', this.ttlSeconds, {
      sxp: Math.floor(expiresAt.getTime() / 1000),
    });
    return { ticket: token, expiresIn: this.ttlSeconds };
  }
}
