// The tts module's event types, each with its payload's schema (lib/kit/typed-events.ts): what
// voices and syntheses publish and what consumers (hubs' references, webhooks) read. Settings,
// states and counts, never a synthesis's text.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

const voice = z.strictObject({
  voice_id: z.string(),
  name: z.string(),
  base_voice: z.string(),
  voice_blend: z.string().nullable(),
  language: z.string(),
  speed: z.number(),
  version: z.number().int(),
});

const synthesis = z.strictObject({
  synthesis_id: z.string(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'canceled']),
  voice_id: z.string().nullable(),
  characters: z.number().int(),
  duration_ms: z.number().nullable(),
  error: z.string().nullable(),
});

/** A voice's fields as events spell them (lib/naming.ts). */
export type VoicePayload = z.output<typeof voice>;

export const VoiceCreated = eventType('voice.created', voice);
/** `changed`: the changed settings' new values; `previous`: their values before. */
export const VoiceUpdated = eventType(
  'voice.updated',
  voice.extend({ changed: z.record(z.string(), z.unknown()), previous: z.record(z.string(), z.unknown()) }),
);
/** `reason` user_deleted: gone with its owner (the kit's cascade). */
export const VoiceDeleted = eventType('voice.deleted', voice.extend({ reason: z.literal('user_deleted').optional() }));
/** Queued with the settings it is spoken with (a voice's, copied: the voice may change meanwhile). */
export const SynthesisQueued = eventType(
  'synthesis.queued',
  synthesis.extend({
    base_voice: z.string(),
    voice_blend: z.string().nullable(),
    language: z.string(),
    speed: z.number(),
  }),
);
/** A worker took it; `attempt` counts from 1 (a job whose worker died is taken again). */
export const SynthesisStarted = eventType('synthesis.started', synthesis.extend({ attempt: z.number().int() }));
export const SynthesisSucceeded = eventType('synthesis.succeeded', synthesis);
export const SynthesisFailed = eventType('synthesis.failed', synthesis);
export const SynthesisCanceled = eventType('synthesis.canceled', synthesis);
export const SynthesisDeleted = eventType('synthesis.deleted', synthesis);

export const ttsEvents = [
  VoiceCreated,
  VoiceUpdated,
  VoiceDeleted,
  SynthesisQueued,
  SynthesisStarted,
  SynthesisSucceeded,
  SynthesisFailed,
  SynthesisCanceled,
  SynthesisDeleted,
];
