// When a user is deleted (the auth subgraph's `user.deleted` event), their voices and syntheses
// go too, with the audio. The tts subgraph never reads the auth database: the kit's cascade
// (lib/kit/user-cascade.ts) follows the event log as a durable consumer and records a job, exactly
// once however many tts processes run; the job queue deletes the rows in batches of at most
// JOBS_BATCH_ROWS per transaction, each batch with its voices' `voice.deleted` events.
import type { DataSource } from 'typeorm';
import { In } from 'typeorm';
import type { Config } from '../../lib/config';
import type { EventConsumer } from '../../lib/event-consumer';
import type { EventLog } from '../../lib/event-log';
import type { JobQueue } from '../../lib/kit/jobs';
import { UserCap, UserCaps } from '../../lib/kit/user-caps';
import { userCascade, UserCascadeBatch } from '../../lib/kit/user-cascade';
import type { Logger } from '../../lib/logger';
import { publish } from '../../lib/kit/typed-events';
import { VoiceDeleted } from './events';
import type { AudioStore } from './audio/audio-store';
import { Synthesis, synthesisEncodedKeys } from './entities/synthesis';
import { Voice } from './entities/voice';
import { voiceEventData } from './voice-service';

/** One batch of what `userId` owns here: voices first, then syntheses in the room left; true while any went. */
export function deleteUserBatch(store: AudioStore, logger?: Logger): UserCascadeBatch {
  return async (ctx) => {
    const userId = ctx.job.ownerId;
    const syntheses = await ctx.dataSource.manager.find(Synthesis, {
      select: { id: true, audioKey: true },
      where: { ownerId: userId },
      order: { id: 'ASC' },
      take: ctx.limit,
    });
    // The audio first: if the transaction then fails, the rows stay and the next batch deletes
    // them; a file is never left without its row. (A job rendering right now finds its row gone
    // and removes the audio it wrote: synthesis-worker.ts.) Only the syntheses this batch has room
    // for after the voices are deleted, so the files of those only.
    const voiceIds = await ctx.dataSource.manager.find(Voice, {
      select: { id: true },
      where: { ownerId: userId },
      take: ctx.limit,
    });
    const room = syntheses.slice(0, ctx.limit - voiceIds.length);
    for (const s of room)
      for (const key of [s.audioKey ?? `${s.id}.wav`, ...synthesisEncodedKeys(s.id)]) await store.delete(key);
    // The user's cap counters go in the batch that removes the last of their rows (or alone, when
    // counters outlived every row), never before their voices.
    const last = voiceIds.length < ctx.limit && syntheses.length < ctx.limit && room.length === syntheses.length;
    if (!voiceIds.length && !room.length) {
      if (await ctx.dataSource.manager.existsBy(UserCap, { ownerId: userId }))
        await ctx.transaction((m) => new UserCaps(m.connection).forget(m, userId));
      return false;
    }
    const counts = await ctx.transaction(async (m, removed) => {
      // Read again inside the batch: only what this transaction deletes gets its event.
      const voices = voiceIds.length ? await m.find(Voice, { where: { id: In(voiceIds.map((v) => v.id)) } }) : [];
      if (voices.length) await m.delete(Voice, { id: In(voices.map((v) => v.id)) });
      for (const v of voices)
        await publish(m, VoiceDeleted, {
          userId,
          resourceId: v.id,
          data: { ...voiceEventData(v), reason: 'user_deleted' },
        });
      if (room.length) await m.delete(Synthesis, { id: In(room.map((s) => s.id)) });
      removed('voices', voices.length);
      removed('syntheses', room.length);
      if (last) await new UserCaps(m.connection).forget(m, userId);
      return { voices: voices.length, syntheses: room.length };
    });
    logger?.info({ userId, ...counts }, "deleted a batch of a deleted user's voices and syntheses");
    return true;
  };
}

export function userDeletionConsumer(options: {
  dataSource: DataSource;
  log: EventLog;
  store: AudioStore;
  queue: JobQueue;
  config: Config;
  logger?: Logger;
}): EventConsumer {
  return userCascade({ module: 'tts', ...options, batch: deleteUserBatch(options.store, options.logger) });
}
