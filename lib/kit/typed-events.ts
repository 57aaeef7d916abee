// Events as types: an event type is declared once with the fields of its payload, and consumers
// get the payload checked and typed instead of parsing JSON themselves. The consumer is the
// durable one of lib/event-consumer.ts (its position stored in the module's own database, moved in
// the transaction of the handler's changes), keyed by the declared types.
import type { EntityManager } from 'typeorm';
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
