// Declared event types (lib/kit/typed-events.ts): a payload is checked against its declaration, and
// one that does not match is refused (null) rather than handed to a consumer half-read.
import type { EntityManager } from 'typeorm';
import { z } from 'zod';
import { defineEvent, EventPayloadError, eventType, publish } from '../../lib/kit/typed-events';
import { UserDeleted } from '../../lib/kit/user-cascade';
import { notesModule } from '../../subgraphs/notes/module';

const NoteDeleted = defineEvent('note.deleted', { note_id: 'string', version: 'number', folder_id: 'string?' });

it('types and checks the declared fields of a payload, and lets others through unread', () => {
  expect(NoteDeleted.parse(JSON.stringify({ note_id: 'n', version: 2, folder_id: null, title: 't' }))).toEqual({
    note_id: 'n',
    version: 2,
    folder_id: null,
  });
  expect(NoteDeleted.parse(JSON.stringify({ note_id: 'n', version: 2 }))).toEqual({
    note_id: 'n',
    version: 2,
    folder_id: null,
  });
  expect(UserDeleted.parse(JSON.stringify({ user_id: 'u', by: 'cli' }))).toEqual({ user_id: 'u', by: 'cli' });
});

it('refuses a payload that is not JSON, not an object, misses a field or has one of another kind', () => {
  for (const bad of [
    '{',
    '[]',
    'null',
    '"x"',
    JSON.stringify({ version: 2 }),
    JSON.stringify({ note_id: 'n', version: '2' }),
  ])
    expect(NoteDeleted.parse(bad)).toBeNull();
  expect(UserDeleted.parse(JSON.stringify({ by: 'cli' }))).toBeNull();
});

describe('an event type with a payload schema (eventType, publish)', () => {
  const ItemMoved = eventType('item.moved', z.strictObject({ item_id: z.string(), to: z.string().nullable() }));
  const recorded: unknown[] = [];
  const manager = {
    create: (_entity: unknown, row: unknown) => row,
    save: async (_entity: unknown, row: unknown) => recorded.push(row),
  } as unknown as EntityManager;

  it('publishes a payload that matches its schema, as JSON in the outbox', async () => {
    await publish(manager, ItemMoved, { userId: 'u', resourceId: 'i', data: { item_id: 'i', to: null } });
    expect(recorded).toEqual([
      expect.objectContaining({
        type: 'item.moved',
        userId: 'u',
        resourceId: 'i',
        payload: '{"item_id":"i","to":null}',
      }),
    ]);
  });

  it('refuses to publish a field the schema does not declare, or one of another kind', async () => {
    const extra = { item_id: 'i', to: null, secret: 'x' } as unknown as { item_id: string; to: string | null };
    await expect(publish(manager, ItemMoved, { userId: 'u', resourceId: 'i', data: extra })).rejects.toThrow(
      EventPayloadError,
    );
    const wrong = { item_id: 1, to: null } as unknown as { item_id: string; to: string | null };
    await expect(publish(manager, ItemMoved, { userId: 'u', resourceId: 'i', data: wrong })).rejects.toThrow(
      /item\.moved: .*item_id/,
    );
    expect(recorded).toHaveLength(1);
  });

  it('reads a payload leniently: fields it does not know pass, a missing or mistyped one is null', () => {
    expect(ItemMoved.parse('{"item_id":"i","to":"x","later":1}')).toEqual({ item_id: 'i', to: 'x', later: 1 });
    expect(ItemMoved.parse('{"to":"x"}')).toBeNull();
    expect(ItemMoved.parse('{')).toBeNull();
  });

  it("lists every notes event type in the notes module's definition, each published through its schema", () => {
    expect(notesModule.events?.map((e) => e.type)).toEqual([
      'note.created',
      'note.updated',
      'note.archived',
      'note.unarchived',
      'note.deleted',
      'note.trashed',
      'note.restored',
      'note_folder.created',
      'note_folder.updated',
      'note_folder.deleted',
    ]);
  });
});
