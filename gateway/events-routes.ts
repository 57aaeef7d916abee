// The event stream's REST route, GET /api/v1/events: the gateway's `events` subscription
// (gateway/events-schema.ts) served as Server-Sent Events by the facade's SSE bridge. A
// declaration only; handed to the facade with the modules' routes (subgraphs/index.ts).
import { configured } from '../rest-facade/configured';
import type { ModuleRoutes, RouteSpec } from '../rest-facade/route-spec';
import type { JsonSchema } from '../rest-facade/schemas';

export const EventFrame: JsonSchema = {
  type: 'string',
  description:
    'Frames of `id: <position>`, `event: <type>`, `data: <JSON>`; the JSON has `type`, `id` (the resource), `occurred_at`, ' +
    "`event_id`, `user_id` and the resource's fields.",
  example:
    'id: 42\nevent: voice.created\ndata: {"type":"voice.created","id":"…","occurred_at":"2026-01-01T00:00:00.000Z","name":"Calm"}\n\n',
};

/** A resume position, as EventSource sends it (empty when it has none). */
const LAST_EVENT_ID = { type: 'string', pattern: '^(\\d{1,15})?$' };

const routes: RouteSpec[] = [
  {
    operationId: 'streamEvents',
    method: 'get',
    path: '/events',
    tag: 'Events',
    auth: true,
    summary: 'Your events, as Server-Sent Events',
    description:
      'A `text/event-stream` of your events: session.created, session.refreshed, session.revoked, voice.created, voice.updated (with `changed`: ' +
      'the changed fields, and `previous`: their former values), voice.deleted, and for each synthesis job synthesis.queued (committed with the ' +
      'request), synthesis.started (each time a worker takes it, with `attempt`), then synthesis.succeeded or synthesis.failed ' +
      '(or synthesis.canceled when canceled; synthesis.deleted when a finished one is deleted); synthesis events carry synthesis_id, state, voice_id, characters, duration_ms and error. ' +
      'Each frame has `id:` (a growing position), `event:` (the type) and `data:` (JSON: `type`, `id` of the resource, `occurred_at`, ' +
      `and the resource's fields). A comment line every ${configured('EVENT_HEARTBEAT_SECONDS', 'seconds')} keeps idle connections open. Reconnect with \`Last-Event-ID\` (or ` +
      '`last_event_id`) to receive everything after it first, with no gap and no duplicate. A position older than what is kept ' +
      `(${configured('EVENT_RETENTION_SECONDS', 'duration')}, EVENT_RETENTION_SECONDS) answers 410 \`resync_required\`: reload your data and connect without a position. The stream ends when ` +
      'your session is revoked, and when you read too slowly or stop reading for two heartbeat periods (resume with ' +
      'Last-Event-ID). Admins may pass `scope=all`. A position past the end of the stream answers 400 `validation_error`. ' +
      'The stream also ends when your access token expires, with a last `event: error` frame (`unauthorized`) telling you ' +
      `to reconnect with a fresh token. At most ${configured('EVENT_STREAMS_PER_USER')} streams of one user at once (EVENT_STREAMS_PER_USER, per server process; ` +
      'REST and GraphQL together): beyond that 429 `rate_limit_exceeded` with `Retry-After`.',
    query: {
      schema: {
        type: 'object',
        properties: {
          scope: { type: 'string', enum: ['own', 'all'], default: 'own' },
          types: {
            type: 'string',
            maxLength: 1000,
            description: 'Only these event types, comma-separated',
            example: 'voice.created,voice.deleted',
          },
          last_event_id: {
            type: 'string',
            pattern: '^\\d{1,15}$',
            description: 'Like the Last-Event-ID header; wins over it',
          },
          ticket: {
            type: 'string',
            maxLength: 4096,
            pattern: '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+$',
            description: 'A stream ticket (POST /api/v1/auth/stream-ticket), instead of the Authorization header',
          },
        },
      },
    },
    graphql: {
      kind: 'subscription',
      field: 'events',
      args: {
        after: {
          type: 'ID',
          value: ({ query, headers }) => query.last_event_id ?? (headers['last-event-id'] || undefined),
        },
        types: {
          type: '[String!]',
          value: ({ query }) =>
            typeof query.types === 'string'
              ? query.types
                  .split(',')
                  .map((t) => t.trim())
                  .filter(Boolean)
              : undefined,
        },
        scope: { type: 'EventScope', value: ({ query }) => query.scope ?? 'own' },
      },
      select: '{ seq event_id: eventId type id: resourceId user_id: userId occurred_at: occurredAt data }',
    },
    headerParams: [
      {
        name: 'Last-Event-ID',
        schema: LAST_EVENT_ID,
        description: 'Resume after this event (EventSource sends it when it reconnects); empty: no position',
      },
    ],
    check: ({ headers }) => {
      const value = headers['last-event-id'];
      return value === undefined || (typeof value === 'string' && new RegExp(LAST_EVENT_ID.pattern).test(value))
        ? null
        : { 'Last-Event-ID': ['must be the id of an event (a stream position: digits)'] };
    },
    stream: {
      frame: ({ seq, data, ...event }) => ({
        id: seq,
        event: event.type,
        data: {
          ...data,
          type: event.type,
          id: event.id,
          occurred_at: event.occurred_at,
          event_id: event.event_id,
          user_id: event.user_id,
        },
      }),
    },
    status: 200,
    response: EventFrame,
    errors: ['validation_error', 'unauthorized', 'forbidden', 'resync_required', 'rate_limit_exceeded'],
  },
];

/** What the entry points hand the facade beside the modules' routes (subgraphs/index.ts). */
export const eventsRoutes: ModuleRoutes = {
  routes,
  schemas: { EventFrame },
  tags: [{ name: 'Events', description: 'Your events as Server-Sent Events, resumable by position.' }],
};
