// Events as types: an event type is declared once, with a zod schema of its payload
// (`eventType`), in its module's events.ts and listed in its definition (lib/module.ts `events`).
// The producer publishes through `publish` (the payload checked against the schema, in the
// transaction of the change: the outbox, lib/outbox.ts); consumers get the payload checked and
// typed instead of parsing JSON themselves. The consumer is the durable one of
// lib/event-consumer.ts (its position stored in the module's own database, moved in the
// transaction of the handler's changes), keyed by the declared types.
import type { EntityManager } from 'typeorm';
import { z } from 'zod';
import { recordEvent } from '../outbox';
import { EventConsumer, type EventConsumerOptions } from '../event-consumer';
import type { LoggedEvent } from '../event-log';

type FieldKind = 'string' | 'number' | 'boolean' | 'object';
/** A field's kind; `?` after it: may be missing or null. */
type FieldSpec = FieldKind | `${FieldKind}?`;

type KindOf<K extends FieldKind> = K extends 'string'
  ? string
  : K extends 'number'
    ? number
    : K extends 'boolean'
      ? boolean
      : Record<string, unknown>;
type Payload<S extends Record<string, FieldSpec>> = {
  [F in keyof S]: S[F] extends `${infer K extends FieldKind}?` ? KindOf<K> | null : KindOf<S[F] & FieldKind>;
};

export interface EventDefinition<T> {
  type: string;
  /** The payload checked against the declaration; null when it does not match (logged, skipped). */
  parse(payload: string): T | null;
}

/** An event type with its payload's schema: what `publish` writes and what consumers read. */
export interface EventType<T> extends EventDefinition<T> {
  readonly schema: z.ZodType<T>;
}

/**
 * Declares an event type (`<entity>.<past tense>`) and its payload's schema. A strict object
 * (`z.strictObject`) makes every published field a declared one; a consumer reads any payload
 * of the type leniently (fields it does not know are let through), so a payload may grow.
 */
export function eventType<S extends z.ZodType<Record<string, unknown>>>(
  type: string,
  schema: S,
): EventType<z.output<S>> {
  const lenient = schema instanceof z.ZodObject ? (schema as unknown as z.ZodObject).loose() : schema;
  return {
    type,
    schema: schema as unknown as z.ZodType<z.output<S>>,
    parse(payload) {
      let data: unknown;
      try {
        data = JSON.parse(payload);
      } catch {
        return null;
      }
      const parsed = lenient.safeParse(data);
      return parsed.success ? (parsed.data as z.output<S>) : null;
    },
  };
}

/** A payload that does not match its type's schema: a mistake in the producer, never written. */
export class EventPayloadError extends Error {
  constructor(type: string, issues: string) {
    super(`event ${type}: the payload does not match its declaration: ${issues}`);
  }
}

/**
 * Records an event of a declared type in the outbox, in the transaction `m` of the change, once
 * the payload matches its schema (a strict schema refuses a field it does not declare). The payload
 * is written as given, its fields in the producer's order: a schema describes a payload, it never
 * changes one (consumers and webhooks read the bytes written before the types were declared).
 */
export async function publish<T extends Record<string, unknown>>(
  m: EntityManager,
  event: EventType<T>,
  at: { userId: string; resourceId: string; data: T },
): Promise<void> {
  const parsed = event.schema.safeParse(at.data);
  if (!parsed.success)
    throw new EventPayloadError(
      event.type,
      parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
    );
  await recordEvent(m, { type: event.type, userId: at.userId, resourceId: at.resourceId, data: at.data });
}

/** Declares an event type and the fields its payload carries (others may be there too). */
export function defineEvent<S extends Record<string, FieldSpec>>(type: string, fields: S): EventDefinition<Payload<S>> {
  return {
    type,
    parse(payload) {
      let data: unknown;
      try {
        data = JSON.parse(payload);
      } catch {
        return null;
      }
      if (!data || typeof data !== 'object' || Array.isArray(data)) return null;
      const record = data as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      for (const [name, spec] of Object.entries(fields)) {
        const optional = spec.endsWith('?');
        const kind = (optional ? spec.slice(0, -1) : spec) as FieldKind;
        const value = record[name];
        if (value === undefined || value === null) {
          if (!optional) return null;
          out[name] = null;
          continue;
        }
        const ok = kind === 'object' ? typeof value === 'object' && !Array.isArray(value) : typeof value === kind;
        if (!ok) return null;
        out[name] = value;
      }
      return out as Payload<S>;
    },
  };
}

/** One handler per declared type: the payload typed, the logged event for its owner, id and position. */
export type TypedHandler<T> = (m: EntityManager, data: T, event: LoggedEvent) => Promise<void>;

export interface TypedHandlers {
  /** Adds a handler for one declared type. */
  on<T>(definition: EventDefinition<T>, handler: TypedHandler<T>): TypedHandlers;
}

/**
 * A durable consumer of the declared types (an event whose payload does not match its declaration
 * is logged and passed over, never retried for ever): `typedConsumer(options, (h) => h.on(E, fn))`.
 */
export function typedConsumer(
  options: Omit<EventConsumerOptions, 'types' | 'handle' | 'handleBatch'>,
  register: (handlers: TypedHandlers) => void,
): EventConsumer {
  const byType = new Map<string, (m: EntityManager, event: LoggedEvent) => Promise<void>>();
  const handlers: TypedHandlers = {
    on(definition, handler) {
      byType.set(definition.type, async (m, event) => {
        const data = definition.parse(event.payload);
        if (data === null) {
          options.logger?.warn(
            { consumer: options.name, type: event.type, seq: event.seq },
            'event payload does not match its declaration; passed over',
          );
          return;
        }
        await handler(m, data, event);
      });
      return handlers;
    },
  };
  register(handlers);
  return new EventConsumer({
    ...options,
    types: [...byType.keys()],
    handle: (m, event) => byType.get(event.type)?.(m, event) ?? Promise.resolve(),
  });
}
