// The webhooks' REST routes, under /api/v1/integrations (CONTRACT.md "Admin: integrations"):
// declarations only, each running one GraphQL operation of this module through the gateway.
import { bodyArgs, queryArg } from '../../rest-facade/graphql-mapping';
import {
  EXPECTED_VERSION,
  EXPECTED_VERSION_ARG,
  idFrom,
  PAGE_ARGS,
  PAGE_QUERY,
  VERSION_QUERY,
} from '../../rest-facade/route-parts';
import type { RouteSpec } from '../../rest-facade/route-spec';
import { CommandAck, JsonSchema, pageSchema, patchBody, uuidParam } from '../../rest-facade/schemas';
import { configured } from '../../rest-facade/configured';
import { WEBHOOK_URL_PATTERN } from './webhook-url';

const URL_FIELD: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 2048,
  pattern: WEBHOOK_URL_PATTERN,
  description: 'An http(s) URL; it must resolve to a public address when events are sent (blocked_address otherwise)',
};
const EVENT_TYPES: JsonSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: { type: 'string', minLength: 1, maxLength: 100 },
  description: 'Event types, or patterns whose `*` matches the rest of the type, dots included (`voice.*`, `*`)',
};
const DESCRIPTION: JsonSchema = { type: ['string', 'null'], maxLength: 500 };

export const CreateWebhookRequest: JsonSchema = {
  type: 'object',
  required: ['url', 'event_types'],
  additionalProperties: true, // unknown fields are ignored
  properties: {
    url: URL_FIELD,
    event_types: EVENT_TYPES,
    description: { type: 'string', maxLength: 500 },
    all_users: {
      type: 'boolean',
      description: "Every user's audit events, not only yours: needs admin:integrations (else 403). Left out: false",
    },
  },
};

const CHANGES: Record<string, JsonSchema> = {
  url: URL_FIELD,
  event_types: EVENT_TYPES,
  description: { type: 'string', maxLength: 500 },
  enabled: { type: 'boolean', description: 'false: nothing is sent; true again: what waited is sent, in order' },
};

export const UpdateWebhookRequest = patchBody(CHANGES);

export const WebhookBody: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'url',
    'event_types',
    'description',
    'enabled',
    'all_users',
    'disabled_reason',
    'version',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string' },
    event_types: { type: 'array', items: { type: 'string' } },
    description: DESCRIPTION,
    enabled: { type: 'boolean' },
    all_users: { type: 'boolean' },
    disabled_reason: {
      type: ['string', 'null'],
      description:
        '`failing`: disabled after its deliveries failed for the retry period; `gone`: its receiver answered 410 Gone',
    } as JsonSchema,
    version: {
      type: 'integer',
      minimum: 1,
      description: '1 when created; every change adds 1. PATCH and DELETE name it.',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export const WebhookSecretBody: JsonSchema = {
  type: 'object',
  required: ['id', 'secret'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    secret: {
      type: 'string',
      description: '`whsec_…`, shown only here: verify deliveries with it (Standard Webhooks)',
    },
  },
};

export const WebhookAttemptBody: JsonSchema = {
  type: 'object',
  required: [
    'id',
    'delivery_id',
    'event_id',
    'event_type',
    'attempt',
    'outcome',
    'status',
    'duration_ms',
    'error',
    'next_attempt_at',
    'created_at',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    delivery_id: { type: 'string', format: 'uuid', description: 'Retry with POST …/deliveries/{delivery_id}/retry' },
    event_id: { type: 'string', format: 'uuid', description: 'Sent as webhook-id' },
    event_type: { type: 'string' },
    attempt: { type: 'integer', minimum: 1 },
    outcome: { type: 'string', enum: ['delivered', 'failed', 'timeout', 'error', 'blocked_address'] },
    status: { type: ['integer', 'null'], description: "The receiver's HTTP status" } as JsonSchema,
    duration_ms: { type: 'integer' },
    error: { type: ['string', 'null'] } as JsonSchema,
    next_attempt_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'null: delivered or given up',
    } as JsonSchema,
    created_at: { type: 'string', format: 'date-time' },
  },
};

const DeliveryAck: JsonSchema = CommandAck;

const PATH = '/integrations/webhooks';
const TAG = 'Webhooks';
const location = (r: Record<string, any>) => `/api/v1${PATH}/${r.id}`;
const ERRORS_OWN = ['validation_error', 'unauthorized', 'not_found'] as const;

export const integrationsRoutes: RouteSpec[] = [
  {
    operationId: 'listWebhooks',
    method: 'get',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Your webhooks, oldest first, a page at a time',
    description: 'Your endpoints with their event types and state (`enabled`, `disabled_reason`), never their secrets.',
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'webhooks', args: PAGE_ARGS },
    status: 200,
    response: pageSchema(WebhookBody),
    errors: ['validation_error', 'unauthorized'],
  },
  {
    operationId: 'getWebhook',
    method: 'get',
    path: `${PATH}/:webhookId`,
    tag: TAG,
    auth: true,
    summary: 'One of your webhooks',
    description: "Another user's webhook is `not_found`, like an unknown id.",
    params: { webhookId: uuidParam },
    graphql: { kind: 'query', field: 'webhook', args: idFrom('webhookId') },
    status: 200,
    etag: (r) => `"${r.version}"`,
    response: WebhookBody,
    errors: [...ERRORS_OWN],
  },
  {
    operationId: 'createWebhook',
    method: 'post',
    path: PATH,
    tag: TAG,
    auth: true,
    summary: 'Create a webhook: your events of the given types are POSTed to it (Standard Webhooks)',
    description:
      'The answer holds its `secret` (`whsec_…`), shown only here. Each delivery carries `webhook-id` (the event id, the same on ' +
      'every attempt), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`; the body is the ' +
      'event as the event stream shows it. 2xx within ' +
      `${configured('WEBHOOK_TIMEOUT_SECONDS', 'seconds')} counts as delivered; others are retried with back-off for ` +
      `${configured('WEBHOOK_RETRY_SECONDS', 'seconds')}, then the webhook is disabled (\`webhook.disabled\`). At most ` +
      `${configured('WEBHOOKS_PER_USER', 'count')} webhooks per user (409 \`conflict\` beyond, with \`details: { limit, max, count }\`).`,
    body: CreateWebhookRequest,
    graphql: { kind: 'mutation', field: 'createWebhook', args: bodyArgs(CreateWebhookRequest) },
    status: 202,
    location,
    response: WebhookSecretBody,
    noStore: true, // the secret
    errors: ['validation_error', 'unauthorized', 'forbidden', 'conflict'],
  },
  {
    operationId: 'updateWebhook',
    method: 'patch',
    path: `${PATH}/:webhookId`,
    tag: TAG,
    auth: true,
    summary: 'Change a webhook at the version you expect',
    description:
      'A field left out stays as it is. Name the version you expect with `?version=N` or `If-Match: "N"` (the ETag of GET); ' +
      'it must equal the stored version, else `conflict` with `details.current_version`.',
    params: { webhookId: uuidParam },
    ...EXPECTED_VERSION,
    body: UpdateWebhookRequest,
    graphql: {
      kind: 'mutation',
      field: 'updateWebhook',
      args: { ...idFrom('webhookId'), version: EXPECTED_VERSION_ARG, ...bodyArgs(UpdateWebhookRequest) },
      select: '{ id version }',
    },
    status: 202,
    ack: 'Changed the webhook.',
    location,
    etag: (r) => `"${r.version}"`,
    response: CommandAck,
    errors: [...ERRORS_OWN, 'conflict'],
  },
  {
    operationId: 'deleteWebhook',
    method: 'delete',
    path: `${PATH}/:webhookId`,
    tag: TAG,
    auth: true,
    summary: 'Delete a webhook at the version you expect (its deliveries and log go too)',
    description: 'Nothing more is sent to the endpoint; `?version=` is the version you expect (else 409 `conflict`).',
    params: { webhookId: uuidParam },
    query: VERSION_QUERY,
    graphql: {
      kind: 'mutation',
      field: 'deleteWebhook',
      args: { ...idFrom('webhookId'), version: queryArg('version', 'Int!') },
      select: '{ id }',
    },
    status: 202,
    ack: 'Deleted the webhook.',
    location,
    response: CommandAck,
    errors: [...ERRORS_OWN, 'conflict'],
  },
  {
    operationId: 'rotateWebhookSecret',
    method: 'post',
    path: `${PATH}/:webhookId/rotate-secret`,
    tag: TAG,
    auth: true,
    summary: 'A new signing secret, shown only in this answer',
    description: `The old secret signs alongside the new one (two \`v1,\` signatures) for ${configured('WEBHOOK_SECRET_OVERLAP_SECONDS', 'seconds')}.`,
    params: { webhookId: uuidParam },
    graphql: { kind: 'mutation', field: 'rotateWebhookSecret', args: idFrom('webhookId') },
    status: 202,
    location,
    response: WebhookSecretBody,
    noStore: true,
    errors: [...ERRORS_OWN],
  },
  {
    operationId: 'testWebhook',
    method: 'post',
    path: `${PATH}/:webhookId/test`,
    tag: TAG,
    auth: true,
    summary: 'Send a `webhook.test` event to the webhook',
    description:
      'It is queued behind what waits for the webhook already; its attempts show in the delivery log (Location).',
    params: { webhookId: uuidParam },
    graphql: { kind: 'mutation', field: 'testWebhook', args: idFrom('webhookId'), select: '{ id webhookId }' },
    status: 202,
    ack: 'Test event queued.',
    location: (r) => `/api/v1${PATH}/${r.webhookId}/deliveries`,
    response: DeliveryAck,
    errors: [...ERRORS_OWN],
  },
  {
    operationId: 'listWebhookDeliveries',
    method: 'get',
    path: `${PATH}/:webhookId/deliveries`,
    tag: TAG,
    auth: true,
    summary: "The webhook's delivery attempts, newest first, a page at a time",
    description: `Kept ${configured('WEBHOOK_LOG_RETENTION_SECONDS', 'seconds')}.`,
    params: { webhookId: uuidParam },
    query: PAGE_QUERY,
    graphql: { kind: 'query', field: 'webhookAttempts', args: { webhookId: idFrom('webhookId').id, ...PAGE_ARGS } },
    status: 200,
    response: pageSchema(WebhookAttemptBody),
    errors: [...ERRORS_OWN],
  },
  {
    operationId: 'retryWebhookDelivery',
    method: 'post',
    path: `${PATH}/deliveries/:deliveryId/retry`,
    tag: TAG,
    auth: true,
    summary: 'Send a delivery again now, with the same webhook-id',
    description:
      'Delivered, given up or waiting: it is sent again with a new retry period. A disabled webhook sends once enabled.',
    params: { deliveryId: uuidParam },
    graphql: {
      kind: 'mutation',
      field: 'retryWebhookDelivery',
      args: idFrom('deliveryId'),
      select: '{ id webhookId }',
    },
    status: 202,
    ack: 'Delivery queued again.',
    location: (r) => `/api/v1${PATH}/${r.webhookId}/deliveries`,
    response: DeliveryAck,
    errors: [...ERRORS_OWN],
  },
];
