// Declared event types (lib/kit/typed-events.ts): a payload is checked against its declaration, and
// one that does not match is refused (null) rather than handed to a consumer half-read.
import { defineEvent } from '../../lib/kit/typed-events';
import { UserDeleted } from '../../lib/kit/user-cascade';

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
