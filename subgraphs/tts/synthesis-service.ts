// Speech synthesis requests: checked and queued here, rendered by the synthesis worker,
// read back (state and audio) by their owner, and deleted with their audio when they expire.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { In, LessThan } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { recordEvent } from '../../lib/outbox';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { AudioStore } from './audio/audio-store';
import { WAV_CONTENT_TYPE } from './audio/wav';
import { parseBlend } from './engine/blend';
import type { SpeechEngine } from './engine/speech-engine';
import { ACTIVE_STATES, Synthesis, synthesisAudioKey, synthesisPartialKey, SynthesisState } from './entities/synthesis';
import { ensureSynthesisOwner, SynthesisOwner } from './entities/synthesis-owner';
import { checkVoiceSettings, VoiceSettings } from './voice-settings';
import { VoiceService } from './voice-service';
import { currentTraceParent } from '../../lib/tracing';

export const MAX_TEXT_CHARACTERS = 10_000;
/** The most bytes one read of the audio returns (base64 in GraphQL answers). */
export const MAX_AUDIO_READ_BYTES = 1024 * 1024;

export interface SynthesisRequest {
  text: string;
  voiceId?: string | null;
  baseVoice?: string | null;
  voiceBlend?: string | null;
  language?: string | null;
  speed?: number | null;
}

/** Syntheses newest first: their ids are UUIDv7, in creation order. */
const SYNTHESIS_ORDER: PageOrder<Synthesis> = { keys: [{ property: 'id', kind: 'uuid' }], direction: 'DESC' };

/** What synthesis.* events carry. */
export const synthesisEventData = (s: Synthesis) => ({
  synthesis_id: s.id,
  state: s.state,
  voice_id: s.voiceId,
  characters: s.characters,
  duration_ms: s.durationMs,
  error: s.error,
});

/**
 * Retry-After of a request refused because the owner's queue is full: a hint, since nobody knows
 * when a job ends (the synthesis.* events say it exactly).
 */
export const QUEUE_FULL_RETRY_SECONDS = 10;

export interface SynthesisServiceOptions {
  /** SYNTHESIS_QUEUE_PER_USER: an owner's jobs queued or running at once. */
  queuePerUser: number;
  /** AUDIO_BYTES_PER_USER: rendered audio an owner may keep; a request past it is refused. */
  audioBytesPerUser?: number;
  /** Told after a job is queued: this process's worker, so that it need not wait for its next poll. */
  onQueued?: () => void;
  /** Told after a job is canceled: this process's worker stops rendering it at once (others notice at their next check). */
  onCanceled?: (synthesisId: string) => void;
}

/** The sample rate of the OpenAI-compatible endpoint's audio (OpenAI's `pcm` is 24 kHz). */
export const SPEECH_SAMPLE_RATE = 24_000;

/** A piece of a synthesis's WAV as far as it is rendered (synthesisStream). */
export interface SynthesisStreamPiece {
  state: SynthesisState;
  error: string | null;
  bytes: Buffer;
  /** The piece reaches the end of the finished audio; no more will come. */
  end: boolean;
}

export interface SynthesisAudio {
  synthesisId: string;
  contentType: string;
  bytes: number;
  key: string;
}

/**
 * OpenAI's voice names, each spoken by one eSpeak NG base voice of a like gender (OpenAI's
 * voices are neural and cannot be matched; these only let clients that send them work).
 * A base voice of the same name would win, but eSpeak NG has none.
 */
export const OPENAI_VOICES: Readonly<Record<string, string>> = {
  alloy: 'f3',
  ash: 'm3',
  ballad: 'm2',
  coral: 'f2',
  echo: 'm1',
  fable: 'm4',
  onyx: 'm7',
  nova: 'f4',
  sage: 'f5',
  shimmer: 'f1',
  verse: 'm5',
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The text's problems: empty, only white space, or too long (counted in code points). */
function textProblems(text: string): Record<string, string[]> {
  const characters = [...text].length;
  if (!text.trim()) return { text: ['must contain something to say'] };
  if (characters > MAX_TEXT_CHARACTERS)
    return { text: [`must be at most ${MAX_TEXT_CHARACTERS} characters (it has ${characters})`] };
  return {};
}

export class SynthesisService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly engine: SpeechEngine,
    private readonly voices: VoiceService,
    private readonly store: AudioStore,
    private readonly options: SynthesisServiceOptions,
  ) {}

  /** Queues the job; the voice's settings are copied in now. */
  async request(ownerId: string, input: SynthesisRequest): Promise<Synthesis> {
    const problems = textProblems(input.text);
    const inline = input.baseVoice != null || input.voiceBlend != null || input.language != null || input.speed != null;
    if (input.voiceId && inline)
      problems.voiceId = ['give voice_id or inline settings (base_voice, voice_blend, language, speed), not both'];
    else if (!input.voiceId && input.baseVoice == null)
      problems.voiceId = ['voice_id, or base_voice with the other inline settings, is required'];
    if (Object.keys(problems).length) throw validationError(problems);

    let settings: VoiceSettings;
    if (input.voiceId) {
      const { baseVoice, voiceBlend, language, speed } = await this.voices.get(ownerId, input.voiceId);
      settings = { baseVoice, voiceBlend, language, speed };
    } else {
      settings = await checkVoiceSettings(this.engine, { ...input, baseVoice: input.baseVoice! });
    }
    return this.queue(ownerId, input.text, input.voiceId ?? null, settings);
  }

  /**
   * The OpenAI-style request (`POST /v1/audio/speech`): `voice` is one of the owner's voice ids, a
   * base voice name, one of OpenAI's voice names (OPENAI_VOICES), or a blend expression (spoken with the blend, its heaviest part as the base
   * voice); `speed`, when given, replaces a stored voice's speed. Queued like any synthesis.
   */
  async requestSpeech(
    ownerId: string,
    input: { text: string; voice: string; speed?: number | null },
  ): Promise<Synthesis> {
    const problems = textProblems(input.text);
    if (Object.keys(problems).length) throw validationError(problems);
    const named = input.voice.trim();
    const voice = Object.hasOwn(OPENAI_VOICES, named.toLowerCase()) ? OPENAI_VOICES[named.toLowerCase()] : named; // not the prototype's `constructor`
    if (UUID.test(voice)) {
      const { id, baseVoice, voiceBlend, language, speed } = await this.voices.get(ownerId, voice.toLowerCase());
      return this.queue(
        ownerId,
        input.text,
        id,
        { baseVoice, voiceBlend, language, speed: input.speed ?? speed },
        SPEECH_SAMPLE_RATE,
      );
    }
    const blend = /[+(]/.test(voice) ? parseBlend(voice) : undefined;
    if (blend && 'problems' in blend) throw validationError({ voice: blend.problems });
    const heaviest = blend?.parts.reduce((a, b) => (b.weight > a.weight ? b : a)).voice;
    let settings: VoiceSettings;
    try {
      settings = await checkVoiceSettings(this.engine, {
        baseVoice: heaviest ?? voice,
        voiceBlend: blend ? voice : null,
        speed: input.speed,
      });
    } catch (err) {
      // The problems are all about `voice`: the only setting the caller named.
      const details = (err as AppError).details as Record<string, string[]> | undefined;
      if ((err as AppError).code === 'validation_error' && details)
        throw validationError({ voice: Object.values(details).flat() });
      throw err;
    }
    return this.queue(ownerId, input.text, null, settings, SPEECH_SAMPLE_RATE);
  }

  private async queue(
    ownerId: string,
    text: string,
    voiceId: string | null,
    settings: VoiceSettings,
    sampleRate: number | null = null,
  ): Promise<Synthesis> {
    const characters = [...text].length;
    const synthesis = this.dataSource.manager.create(Synthesis, {
      id: uuidv7(),
      ownerId,
      state: SynthesisState.QUEUED,
      voiceId,
      ...settings,
      text,
      characters,
      durationMs: null,
      error: null,
      attempts: 0,
      workerId: null,
      leaseUntil: null,
      audioKey: null,
      audioBytes: null,
      sampleRate,
      traceParent: currentTraceParent(),
      createdAt: new Date(),
      startedAt: null,
      finishedAt: null,
    });
    // The owner's row, to lock below.
    await ensureSynthesisOwner(this.dataSource, ownerId);
    // The job and its synthesis.queued event commit together.
    await inTransaction(this.dataSource, async (m) => {
      // Writing the owner's row first serialises this owner's requests (a row lock on MySQL, the
      // database's write lock on SQLite) until commit, so the count cannot be raced. On MySQL the
      // transaction's snapshot is taken by its first read, the count, after the lock is held.
      await m.update(SynthesisOwner, { ownerId }, { lastQueuedAt: new Date() });
      const active = await m.countBy(Synthesis, { ownerId, state: In(ACTIVE_STATES) });
      const limit = this.options.queuePerUser;
      if (active >= limit) {
        throw new AppError(
          'rate_limit_exceeded',
          `You have ${active} syntheses queued or running, the most allowed (${limit}); request more as they finish, or cancel some.`,
          { limit, active },
          QUEUE_FULL_RETRY_SECONDS,
        );
      }
      // Kept audio is counted when a synthesis is requested: every stored file of the owner's
      // (an encoding kept beside a WAV would count here too).
      const audioLimit = this.options.audioBytesPerUser ?? Infinity;
      if (audioLimit !== Infinity) {
        const kept = await m
          .createQueryBuilder(Synthesis, 's')
          .select('COALESCE(SUM(s.audioBytes), 0)', 'bytes')
          .where('s.ownerId = :ownerId AND s.audioKey IS NOT NULL', { ownerId })
          .getRawOne<{ bytes: string | number }>();
        const bytes = Number(kept?.bytes ?? 0);
        if (bytes >= audioLimit) {
          throw new AppError(
            'conflict',
            `You keep ${bytes} bytes of audio, the most allowed (${audioLimit}); delete some syntheses to request more.`,
            { limit: audioLimit, bytes },
          );
        }
      }
      await m.insert(Synthesis, synthesis);
      await recordEvent(m, {
        type: 'synthesis.queued',
        userId: ownerId,
        resourceId: synthesis.id,
        data: {
          ...synthesisEventData(synthesis),
          base_voice: synthesis.baseVoice,
          voice_blend: synthesis.voiceBlend,
          language: synthesis.language,
          speed: synthesis.speed,
        },
      });
    });
    this.options.onQueued?.();
    return synthesis;
  }

  /**
   * Cancels a queued or running job (its worker stops and leaves no audio), with a
   * synthesis.canceled event; deletes a finished one (succeeded, failed, canceled) with its audio,
   * with a synthesis.deleted event. Answers which it was, and the synthesis as the cancel left
   * it or as it was when deleted. Another user's is `not_found`.
   */
  async cancel(
    ownerId: string,
    id: string,
    keepFinished = false,
  ): Promise<{ outcome: 'canceled' | 'deleted' | 'unchanged'; synthesis: Synthesis }> {
    const canceled = await inTransaction(this.dataSource, async (m) => {
      const now = new Date();
      const stopped = { state: SynthesisState.CANCELED, finishedAt: now, leaseUntil: null, workerId: null };
      if (affectedRows(await m.update(Synthesis, { id, ownerId, state: In(ACTIVE_STATES) }, stopped)) !== 1)
        return null;
      const row = await m.findOneByOrFail(Synthesis, { id });
      await recordEvent(m, {
        type: 'synthesis.canceled',
        userId: ownerId,
        resourceId: id,
        data: synthesisEventData(row),
      });
      return row;
    });
    if (canceled) {
      this.options.onCanceled?.(id);
      // A worker may have stored the audio just before: it is not the job's any more (the worker deletes it too if it stores later).
      await this.store.delete(synthesisAudioKey(id));
      return { outcome: 'canceled', synthesis: canceled };
    }
    // Not queued nor running: finished (it stays so), or not there.
    const finished = await this.get(ownerId, id);
    if (keepFinished) return { outcome: 'unchanged', synthesis: finished };
    // The audio first, as retention does: a crash in between leaves a row without audio, never audio without a row.
    await this.store.delete(finished.audioKey ?? synthesisAudioKey(id));
    const deleted = await inTransaction(this.dataSource, async (m) => {
      if (affectedRows(await m.delete(Synthesis, { id, ownerId, state: finished.state })) !== 1) return false;
      await recordEvent(m, {
        type: 'synthesis.deleted',
        userId: ownerId,
        resourceId: id,
        data: synthesisEventData(finished),
      });
      return true;
    });
    if (!deleted) throw new AppError('not_found', 'No such synthesis.'); // a concurrent delete won
    return { outcome: 'deleted', synthesis: finished };
  }

  /** Another user's synthesis is `not_found`, exactly like an unknown id. */
  async get(ownerId: string, id: string): Promise<Synthesis> {
    const synthesis = await this.dataSource.manager.findOneBy(Synthesis, { id, ownerId });
    if (!synthesis) throw new AppError('not_found', 'No such synthesis.');
    return synthesis;
  }

  /** The owner's syntheses, newest first (ids are UUIDv7), `limit` at a time after the cursor; only those in `state` when given. */
  list(
    ownerId: string,
    limit: number,
    cursor?: string | null,
    state?: SynthesisState | null,
  ): Promise<Page<Synthesis>> {
    const query = this.dataSource.manager.createQueryBuilder(Synthesis, 's').where('s.ownerId = :ownerId', { ownerId });
    if (state) query.andWhere('s.state = :state', { state });
    return pageOf(query, SYNTHESIS_ORDER, limit, cursor);
  }

  /** The audio of a succeeded synthesis, or null. */
  audioOf(synthesis: Synthesis): SynthesisAudio | null {
    if (synthesis.state !== SynthesisState.SUCCEEDED || !synthesis.audioKey) return null;
    return {
      synthesisId: synthesis.id,
      contentType: WAV_CONTENT_TYPE,
      bytes: synthesis.audioBytes ?? 0,
      key: synthesis.audioKey,
    };
  }

  /** Like audioOf, but says why there is none: `conflict` while it is not done, `not_found` once it is gone. */
  async audio(ownerId: string, id: string): Promise<SynthesisAudio> {
    const synthesis = await this.get(ownerId, id);
    const audio = this.audioOf(synthesis);
    if (!audio) {
      const why =
        synthesis.state === SynthesisState.FAILED
          ? 'it failed, so it has no audio'
          : `it is ${synthesis.state}; the audio is there once it has succeeded`;
      throw new AppError('conflict', `The synthesis has no audio: ${why}.`, { state: synthesis.state });
    }
    return audio;
  }

  /**
   * `length` bytes of the synthesis's WAV from `offset`, as far as they are rendered: while it
   * runs, from the file its worker is writing (its header says "length unknown"; the samples are
   * those the finished file will have), once it has succeeded from the finished file. Fewer
   * bytes (none) when no more are rendered yet; `end` once the piece reaches the end.
   */
  async stream(ownerId: string, id: string, offset: number, length: number): Promise<SynthesisStreamPiece> {
    if (length > MAX_AUDIO_READ_BYTES) throw validationError({ length: [`must be at most ${MAX_AUDIO_READ_BYTES}`] });
    const synthesis = await this.get(ownerId, id);
    const { state, error } = synthesis;
    const nothing = Buffer.alloc(0);
    if (state === SynthesisState.SUCCEEDED) {
      const audio = this.audioOf(synthesis)!;
      const bytes = await this.readAudio(audio, offset, length);
      return { state, error, bytes, end: offset + bytes.length >= audio.bytes };
    }
    if (state === SynthesisState.RUNNING && synthesis.workerId) {
      // Not there yet (just taken), or already renamed onto its key (done, not yet recorded).
      const bytes =
        (await this.store.read(synthesisPartialKey(synthesis), offset, length)) ??
        (await this.store.read(synthesisAudioKey(id), offset, length));
      return { state, error, bytes: bytes ?? nothing, end: false };
    }
    return { state, error, bytes: nothing, end: state !== SynthesisState.QUEUED && state !== SynthesisState.RUNNING };
  }

  async readAudio(audio: SynthesisAudio, offset: number, length: number): Promise<Buffer> {
    const problems: Record<string, string[]> = {};
    if (offset > audio.bytes) problems.offset = [`is past the end of the audio (${audio.bytes} bytes)`];
    if (length > MAX_AUDIO_READ_BYTES) problems.length = [`must be at most ${MAX_AUDIO_READ_BYTES}`];
    if (Object.keys(problems).length) throw validationError(problems);
    const bytes = await this.store.read(audio.key, offset, length);
    if (!bytes) throw new AppError('not_found', 'The audio has expired.');
    return bytes;
  }

  /**
   * Deletes syntheses that finished before `before`, with their audio: the audio first, so a
   * row never outlives its file for long and a crash in between leaves nothing behind.
   */
  async prune(before: Date, batch = 500): Promise<number> {
    let total = 0;
    for (;;) {
      const expired = await this.dataSource.manager.find(Synthesis, {
        select: { id: true, audioKey: true },
        where: { finishedAt: LessThan(before) },
        take: batch,
      });
      if (!expired.length) return total;
      for (const s of expired) if (s.audioKey) await this.store.delete(s.audioKey);
      await this.dataSource.manager.delete(Synthesis, { id: In(expired.map((s) => s.id)) });
      total += expired.length;
      if (expired.length < batch) return total;
    }
  }
}
