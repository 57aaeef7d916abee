// The integrations module's event types, each with its payload's schema (lib/kit/typed-events.ts):
// what webhooks' service and delivery publish. An endpoint's settings, never its secret.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

const webhook = z.strictObject({
  webhook_id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()),
  enabled: z.boolean(),
  all_users: z.boolean(),
  version: z.number().int(),
});

/** A webhook's fields as events spell them (lib/naming.ts). */
export type WebhookPayload = z.output<typeof webhook>;

export const WebhookCreated = eventType('webhook.created', webhook);
export const WebhookUpdated = eventType('webhook.updated', webhook);
export const WebhookDeleted = eventType('webhook.deleted', webhook);
/** A new secret signs its deliveries (the old one alongside it for a while); the secret is not in the event. */
export const WebhookSecretRotated = eventType('webhook.secret_rotated', webhook);
/**
 * Delivery gave up on the endpoint and disabled it: `gone` (it answered 410) or `failing` (every
 * attempt of a delivery failed); `last_event_id` is the event whose delivery gave up.
 */
export const WebhookDisabled = eventType(
  'webhook.disabled',
  z.strictObject({
    webhook_id: z.string(),
    url: z.string(),
    reason: z.enum(['gone', 'failing']),
    last_event_id: z.string(),
  }),
);

export const integrationsEvents = [
  WebhookCreated,
  WebhookUpdated,
  WebhookDeleted,
  WebhookSecretRotated,
  WebhookDisabled,
];
