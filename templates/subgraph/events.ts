// The examples module's event types, each with its payload's schema (lib/kit/typed-events.ts):
// the service publishes them, consumers read them typed, and the module definition lists them.
import { z } from 'zod';
import { eventType } from '../../lib/kit/typed-events';

/**
 * What example_item.* events carry: the example item without its owner, in snake_case. The id and
 * the version are declared; the other columns come along (a loose object), so a new column needs
 * no change here.
 */
const exampleItem = z.looseObject({
  example_item_id: z.string(),
  version: z.number().int(),
  /** Set when the rows went because their owner was deleted (the kit's cascade). */
  reason: z.literal('user_deleted').optional(),
});

export const ExampleItemCreated = eventType('example_item.created', exampleItem);
export const ExampleItemUpdated = eventType('example_item.updated', exampleItem);
export const ExampleItemDeleted = eventType('example_item.deleted', exampleItem);

export const examplesEvents = [ExampleItemCreated, ExampleItemUpdated, ExampleItemDeleted];
