// The voice service's delete below HTTP, on SQLite and on MySQL: the version is checked by
// the DELETE statement itself, not only by the read before it. The database is real; the
// engine is a stand-in catalog (the real one is exercised in voices.test.ts).
import type { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { loadConfig } from '../../lib/config';
import { openDatabase } from '../../lib/database/open';
import { AppError } from '../../lib/errors';
import { OutboxEvent } from '../../lib/outbox';
import { ttsSubgraph } from '../../subgraphs/tts';
import type { SpeechEngine } from '../../subgraphs/tts/engine/speech-engine';
import { Voice } from '../../subgraphs/tts/entities/voice';
import { decodeCursor, encodeCursor } from '../../lib/paging';
import { VoiceService } from '../../subgraphs/tts/voice-service';
import { cleanupDatabases, isolatedEnv } from '../helpers/server';

const config = loadConfig({ ...isolatedEnv(), LOG_LEVEL: 'silent' });
const catalog: SpeechEngine = {
  name: 'stand-in',
  defaultLanguage: 'en-us',
  baseVoices: async () => [
    { name: 'f3', displayName: 'female3', gender: 'female', languages: ['en-us'], description: 'f3' },
  ],
  languages: async () => ['en-us'],
  synthesize: async () => {
    throw new Error('not used');
  },
  stop: async () => {},
};
let db: DataSource;
let service: VoiceService;
const owner = uuidv7();

beforeAll(async () => {
  db = await openDatabase(config, { name: 'tts', entities: ttsSubgraph.entities, migrations: ttsSubgraph.migrations });
  service = new VoiceService(db, catalog);
});
afterAll(async () => {
  await db?.destroy();
  await cleanupDatabases(config);
});

let n = 0;
const create = () => service.create(owner, { name: `voice ${++n}`, baseVoice: 'F3' });
const deletedEvents = (id: string) => db.manager.findBy(OutboxEvent, { resourceId: id, type: 'voice.deleted' });
const codeOf = (err: unknown) => (err instanceof AppError ? err.code : `not an AppError: ${String(err)}`);

describe('VoiceService.delete', () => {
  it('refuses a delete whose version moved after it was read: the statement checks it, not only the read', async () => {
    const voice = await create();
    // Another writer moves the version between the delete's read and its DELETE statement.
    const findOneBy = db.manager.findOneBy.bind(db.manager);
    const spy = jest
      .spyOn(db.manager, 'findOneBy')
      .mockImplementationOnce(async (...args: Parameters<typeof findOneBy>) => {
        const read = await findOneBy(...args);
        await db.manager.update(Voice, { id: voice.id }, { version: 2 });
        return read;
      });
    try {
      const outcome = await service.delete(owner, voice.id, 1).then(
        () => 'deleted',
        (err) => err,
      );
      expect(codeOf(outcome)).toBe('conflict');
      expect(outcome.details).toEqual({ currentVersion: 2 });
    } finally {
      spy.mockRestore();
    }
    expect(await db.manager.findOneBy(Voice, { id: voice.id })).toMatchObject({ version: 2 });
    expect(await deletedEvents(voice.id)).toEqual([]);
    // At the version it has now, it goes, with one event.
    expect((await service.delete(owner, voice.id, 2)).id).toBe(voice.id);
    expect(await deletedEvents(voice.id)).toHaveLength(1);
  });

  it('of 10 concurrent deletes at the right version one wins, the others get not_found or conflict, and one event is recorded', async () => {
    const voice = await create();
    const outcomes = await Promise.all(
      Array.from({ length: 10 }, () => service.delete(owner, voice.id, 1).then(() => 'deleted', codeOf)),
    );
    expect(outcomes.filter((o) => o === 'deleted')).toHaveLength(1);
    expect(outcomes.filter((o) => o !== 'deleted' && o !== 'not_found' && o !== 'conflict')).toEqual([]);
    expect(await db.manager.findOneBy(Voice, { id: voice.id })).toBeNull();
    const events = await deletedEvents(voice.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ userId: owner });
    expect(JSON.parse(events[0].payload)).toMatchObject({
      voice_id: voice.id,
      name: voice.name,
      base_voice: 'f3',
      version: 1,
    });
  });

  it("is not_found for another owner's voice and for an unknown id, and leaves the voice alone", async () => {
    const voice = await create();
    await expect(service.delete(uuidv7(), voice.id, 1).catch(codeOf)).resolves.toBe('not_found');
    await expect(service.delete(owner, uuidv7(), 1).catch(codeOf)).resolves.toBe('not_found');
    expect(await db.manager.findOneBy(Voice, { id: voice.id })).not.toBeNull();
    expect(await deletedEvents(voice.id)).toEqual([]);
  });

  it('a stale version is a conflict naming the current one, with no event', async () => {
    const voice = await create();
    const err = await service.delete(owner, voice.id, 3).catch((e) => e);
    expect(codeOf(err)).toBe('conflict');
    expect(err.details).toEqual({ currentVersion: 1 });
    expect(err.message).toBe('The voice is at version 1, not 3.');
    expect(await deletedEvents(voice.id)).toEqual([]);
  });
});

/** Runs `between` after the service's first read of a voice and before its write. */
async function afterRead<T>(between: () => Promise<unknown>, act: () => Promise<T>) {
  const findOneBy = db.manager.findOneBy.bind(db.manager);
  const spy = jest
    .spyOn(db.manager, 'findOneBy')
    .mockImplementationOnce(async (...args: Parameters<typeof findOneBy>) => {
      const read = await findOneBy(...args);
      await between();
      return read;
    });
  try {
    return await act().catch((err) => err);
  } finally {
    spy.mockRestore();
  }
}

describe('VoiceService: not_found', () => {
  it("get() is not_found, with its message, for another owner's voice and for an unknown id", async () => {
    const voice = await create();
    for (const [who, id] of [
      [uuidv7(), voice.id],
      [owner, uuidv7()],
    ]) {
      await expect(service.get(who, id)).rejects.toMatchObject({ code: 'not_found', message: 'No such voice.' });
    }
    expect((await service.get(owner, voice.id)).id).toBe(voice.id);
  });

  it('a delete that finds the voice gone by its DELETE statement is not_found, with its message', async () => {
    await create(); // other voices exist: the voice looked up again is this one
    const voice = await create();
    const err = await afterRead(
      () => db.manager.delete(Voice, { id: voice.id }),
      () => service.delete(owner, voice.id, 1),
    );
    expect(err).toMatchObject({ code: 'not_found', message: 'No such voice.' });
  });

  it('an update that finds the voice gone by its UPDATE statement is not_found, with its message', async () => {
    await create();
    const voice = await create();
    const err = await afterRead(
      () => db.manager.delete(Voice, { id: voice.id }),
      () => service.update(owner, voice.id, 1, { speed: 1.5 }),
    );
    expect(err).toMatchObject({ code: 'not_found', message: 'No such voice.' });
  });
});

describe('VoiceService.list', () => {
  it('a page of exactly `limit` voices with nothing after it has no next cursor', async () => {
    const someone = uuidv7();
    const made = [
      await service.create(someone, { name: 'a', baseVoice: 'F3' }),
      await service.create(someone, { name: 'b', baseVoice: 'F3' }),
    ];
    const page = await service.list(someone, 2);
    expect(page.items.map((v) => v.id)).toEqual(made.map((v) => v.id));
    expect(page.nextCursor).toBeNull();
    const first = await service.list(someone, 1);
    expect(first.nextCursor).toBe(encodeCursor([made[0].id]));
  });

  it('refuses a cursor that holds more than a voice id, before or after it', () => {
    const id = uuidv7();
    expect(decodeCursor(encodeCursor([id]), ['uuid'])).toEqual([id]);
    for (const text of [`x${id}`, `${id}x`]) {
      expect(() => decodeCursor(encodeCursor([text]), ['uuid'])).toThrow(
        expect.objectContaining({
          code: 'validation_error',
          details: { cursor: ['is not a cursor this service handed out'] },
        }),
      );
    }
  });
});
