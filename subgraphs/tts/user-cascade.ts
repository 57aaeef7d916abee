// When a user is deleted (the auth subgraph's `user.deleted` event), their voices and syntheses
// go too, with the audio. The tts subgraph never reads the auth database: it follows the event
// log as a durable consumer (lib/event-consumer.ts), so the deletion happens exactly once however
// many tts processes run, and catches up after a restart.
import type { EntityManager } from 'typeorm';
import { In } from 'typeorm';
import { EventConsumer } from '../../lib/event-consumer';
import { UserCap } from '../../lib/kit/user-caps';
import type { EventLog, LoggedEvent } from '../../lib/event-log';
import type { Logger } from '../../lib/logger';
import { recordEvent } from '../../lib/outbox';
import type { DataSource } from 'typeorm';
import type { AudioStore } from './audio/audio-store';
import { Synthesis, synthesisEncodedKeys } from './entities/synthesis';
import { Voice } from './entities/voice';
import { voiceEventData } from './voice-service';

/** Deletes everything `userId` owns here. Runs inside the consumer's transaction. */
export async function deleteUserData(
  m: EntityManager,
  store: AudioStore,
  userId: string,
  logger?: Logger,
): Promise<{ voices: number; syntheses: number }> {
  const voices = await m.find(Voice, { where: { ownerId: userId } });
  for (const v of voices) {
    await m.delete(Voice, { id: v.id });
    await recordEvent(m, {
      type: 'voice.deleted',
      userId,
      resourceId: v.id,
      data: { ...voiceEventData(v), reason: 'user_deleted' },
    });
  }
  const syntheses = await m.find(Synthesis, { select: { id: true, audioKey: true }, where: { ownerId: userId } });
  // The audio first: if the transaction then fails, the rows stay and the next run deletes them;
  // a file is never left without its row. (A job rendering right now finds its row gone and
  // removes the audio it wrote: synthesis-worker.ts.)
  for (const s of syntheses)
    for (const key of [s.audioKey ?? `${s.id}.wav`, ...synthesisEncodedKeys(s.id)]) await store.delete(key);
  if (syntheses.length) await m.delete(Synthesis, { id: In(syntheses.map((s) => s.id)) });
  await m.delete(UserCap, { ownerId: userId });
  logger?.info({ userId, voices: voices.length, syntheses: syntheses.length }, "deleted user's voices and syntheses");
  return { voices: voices.length, syntheses: syntheses.length };
}

export function userDeletionConsumer(options: {
  dataSource: DataSource;
  log: EventLog;
  store: AudioStore;
  intervalMs: number;
  maxIntervalMs?: number;
  logger?: Logger;
}): EventConsumer {
  return new EventConsumer({
    name: 'tts.user-deleted',
    dataSource: options.dataSource,
    log: options.log,
    types: ['user.deleted'],
    intervalMs: options.intervalMs,
    maxIntervalMs: options.maxIntervalMs,
    logger: options.logger,
    handle: async (m, event: LoggedEvent) => {
      await deleteUserData(m, options.store, event.userId, options.logger);
    },
  });
}
