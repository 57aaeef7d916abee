// Speech synthesis requests: checked and queued here, rendered by the synthesis worker,
// read back (state and audio) by their owner, and deleted with their audio when they expire.
import { v7 as uuidv7 } from 'uuid';
import type { DataSource } from 'typeorm';
import { In, LessThan } from 'typeorm';
import { affectedRows } from '../../lib/database/portable';
import { inTransaction } from '../../lib/database/transactions';
import { AppError, validationError } from '../../lib/errors';
import { publish } from '../../lib/kit/typed-events';
import { SynthesisCanceled, SynthesisDeleted, SynthesisQueued } from './events';
import { Page, pageOf, PageOrder } from '../../lib/paging';
import type { AudioStore } from './audio/audio-store';
import { WAV_CONTENT_TYPE } from './audio/wav';
import { parseBlend } from './engine/blend';
import type { SpeechEngine } from './engine/speech-engine';
import {
  ACTIVE_STATES,
  Synthesis,
  synthesisAudioKey,
  synthesisEncodedKey,
  synthesisEncodedKeys,
  synthesisPartialKey,
  SynthesisState,
} from './entities/synthesis';
import { randomUUID } from 'node:crypto';
import type { EncoderPool } from './audio/encoder-pool';
import { AUDIO_CONTENT_TYPES, AudioFormat, ENCODED_EXTENSIONS, EncodedFormat, isEncoded } from './audio/encoders';
import { WAV_HEADER_BYTES } from './audio/wav';
import { WordTimingView, wordTimings, webVtt } from './synthesis-timings';
import { ensureSynthesisOwner, SynthesisOwner } from './entities/synthesis-owner';
import { checkVoiceSettings, VoiceSettings } from './voice-settings';
import { VoiceService } from './voice-service';
import { currentTraceParent } from '../../lib/tracing';
import { isUuid } from '../../lib/validators';

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
  /** Encodes stored syntheses into other formats (AUDIO_ENCODER_THREADS); without it only wav and pcm are served. */
  encoders?: EncoderPool;
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
  format: AudioFormat;
  contentType: string;
  /** The file's size; null while its encoding is being made (the first request: read it with encodingStream). */
  bytes: number | null;
  key: string;
  /** Where the served bytes start in the stored object (pcm: after the WAV header). */
  skip: number;
}

/** A piece of an encoding as far as it is made (the first request for a format). */
export interface EncodingPiece {
  bytes: Buffer;
  end: boolean;
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
    input: { text: string; voice: string; speed?: number | null; format?: AudioFormat | null },
  ): Promise<Synthesis> {
    const streamFormat = input.format && isEncoded(input.format) ? input.format : null;
    const problems = textProblems(input.text);
    if (Object.keys(problems).length) throw validationError(problems);
    const named = input.voice.trim();
    const voice = Object.hasOwn(OPENAI_VOICES, named.toLowerCase()) ? OPENAI_VOICES[named.toLowerCase()] : named; // not the prototype's `constructor`
    if (isUuid(voice)) {
      const { id, baseVoice, voiceBlend, language, speed } = await this.voices.get(ownerId, voice.toLowerCase());
      return this.queue(
        ownerId,
        input.text,
        id,
        { baseVoice, voiceBlend, language, speed: input.speed ?? speed },
        SPEECH_SAMPLE_RATE,
        streamFormat,
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
    return this.queue(ownerId, input.text, null, settings, SPEECH_SAMPLE_RATE, streamFormat);
  }

  private async queue(
    ownerId: string,
    text: string,
    voiceId: string | null,
    settings: VoiceSettings,
    sampleRate: number | null = null,
    streamFormat: EncodedFormat | null = null,
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
      streamFormat,
      encodedBytes: null,
      timings: null,
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
      // Kept audio is counted when a synthesis is requested: every stored file of the owner's,
      // the WAVs and the encodings cached beside them.
      const audioLimit = this.options.audioBytesPerUser ?? Infinity;
      if (audioLimit !== Infinity) {
        const kept = await m
          .createQueryBuilder(Synthesis, 's')
          .select('COALESCE(SUM(s.audioBytes), 0) + COALESCE(SUM(s.encodedBytes), 0)', 'bytes')
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
      await publish(m, SynthesisQueued, {
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
      await publish(m, SynthesisCanceled, {
        userId: ownerId,
        resourceId: id,
        data: synthesisEventData(row),
      });
      return row;
    });
    if (canceled) {
      this.options.onCanceled?.(id);
      // A worker may have stored the audio just before: it is not the job's any more (the worker deletes it too if it stores later).
      await this.deleteFiles(id, synthesisAudioKey(id));
      return { outcome: 'canceled', synthesis: canceled };
    }
    // Not queued nor running: finished (it stays so), or not there.
    const finished = await this.get(ownerId, id);
    if (keepFinished) return { outcome: 'unchanged', synthesis: finished };
    // The audio first, as retention does: a crash in between leaves a row without audio, never audio without a row.
    await this.deleteFiles(id, finished.audioKey ?? synthesisAudioKey(id));
    const deleted = await inTransaction(this.dataSource, async (m) => {
      if (affectedRows(await m.delete(Synthesis, { id, ownerId, state: finished.state })) !== 1) return false;
      await publish(m, SynthesisDeleted, {
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

  /** The WAV and every encoding cached beside it: deleted together, the WAV first. */
  private async deleteFiles(id: string, wavKey: string): Promise<void> {
    for (const key of [wavKey, ...synthesisEncodedKeys(id)]) await this.store.delete(key);
  }

  /** The WAV of a succeeded synthesis, or null. */
  audioOf(synthesis: Synthesis): SynthesisAudio | null {
    if (synthesis.state !== SynthesisState.SUCCEEDED || !synthesis.audioKey) return null;
    return {
      synthesisId: synthesis.id,
      format: 'wav',
      contentType: WAV_CONTENT_TYPE,
      bytes: synthesis.audioBytes ?? 0,
      key: synthesis.audioKey,
      skip: 0,
    };
  }

  /** The succeeded synthesis, or why it has no audio: `conflict` while it is not done, `not_found` once it is gone. */
  private async succeeded(ownerId: string, id: string): Promise<Synthesis> {
    const synthesis = await this.get(ownerId, id);
    if (synthesis.state !== SynthesisState.SUCCEEDED || !synthesis.audioKey) {
      const why =
        synthesis.state === SynthesisState.FAILED
          ? 'it failed, so it has no audio'
          : `it is ${synthesis.state}; the audio is there once it has succeeded`;
      throw new AppError('conflict', `The synthesis has no audio: ${why}.`, { state: synthesis.state });
    }
    return synthesis;
  }

  /**
   * The audio in `format`: the WAV, its samples (pcm), or an encoding cached beside it. An
   * encoding not cached yet is started (in the encoder pool) and answered with `bytes: null`:
   * read it with encodingStream as it is made.
   */
  async audio(ownerId: string, id: string, format: AudioFormat = 'wav'): Promise<SynthesisAudio> {
    const synthesis = await this.succeeded(ownerId, id);
    const wav = this.audioOf(synthesis)!;
    if (format === 'wav') return wav;
    if (format === 'pcm')
      return {
        ...wav,
        format,
        contentType: AUDIO_CONTENT_TYPES.pcm,
        bytes: Math.max(0, wav.bytes! - WAV_HEADER_BYTES),
        skip: WAV_HEADER_BYTES,
      };
    const key = synthesisEncodedKey(id, format);
    const bytes = this.encodings.has(key) ? null : await this.store.size(key);
    if (bytes === null) this.startEncoding(synthesis, format);
    return { synthesisId: id, format, contentType: AUDIO_CONTENT_TYPES[format], bytes, key, skip: 0 };
  }

  /** Encodings this process is making: the final key → the partial one, and the work. */
  private readonly encodings = new Map<string, { partialKey: string; done: Promise<void> }>();

  private startEncoding(synthesis: Synthesis, format: EncodedFormat): void {
    const key = synthesisEncodedKey(synthesis.id, format);
    if (this.encodings.has(key)) return;
    const pool = this.options.encoders;
    if (!pool) throw new AppError('service_unavailable', `This server does not encode ${format}.`);
    const partialKey = `${synthesis.id}.${ENCODED_EXTENSIONS[format]}.${randomUUID().slice(0, 8)}.part`;
    const done = pool
      .encode(this.store, synthesis.audioKey!, format, partialKey, key)
      .then(() => this.countEncodings(synthesis.id))
      .catch(() => undefined) // a reader finds neither file, and the next request tries again
      .finally(() => this.encodings.delete(key));
    this.encodings.set(key, { partialKey, done });
  }

  /**
   * Records the cached encodings' bytes (for the audio quota), from what is stored: encodings
   * made twice at once (by two processes) count once. A synthesis deleted meanwhile loses them.
   */
  private async countEncodings(id: string): Promise<void> {
    let total = 0;
    for (const key of synthesisEncodedKeys(id)) total += (await this.store.size(key)) ?? 0;
    const result = await this.dataSource.manager.update(
      Synthesis,
      { id, state: SynthesisState.SUCCEEDED },
      { encodedBytes: total },
    );
    if (affectedRows(result) !== 1) for (const key of synthesisEncodedKeys(id)) await this.store.delete(key);
  }

  /**
   * `length` bytes from `offset` of the synthesis's encoding in `format` as far as it is made
   * (the first request for a format, which streams it while it encodes); `end` once the piece
   * reaches the end of the finished file.
   */
  async encodingStream(
    ownerId: string,
    id: string,
    format: EncodedFormat,
    offset: number,
    length: number,
  ): Promise<EncodingPiece> {
    if (length > MAX_AUDIO_READ_BYTES) throw validationError({ length: [`must be at most ${MAX_AUDIO_READ_BYTES}`] });
    const synthesis = await this.succeeded(ownerId, id);
    const key = synthesisEncodedKey(id, format);
    const running = this.encodings.get(key);
    if (running) {
      const bytes = await this.store.read(running.partialKey, offset, length);
      if (bytes) return { bytes, end: false };
    }
    const size = await this.store.size(key);
    if (size === null) {
      // Made by another process's request, or not started here yet: this one makes it too (the same bytes).
      this.startEncoding(synthesis, format);
      return { bytes: Buffer.alloc(0), end: false };
    }
    const bytes = (await this.store.read(key, offset, length)) ?? Buffer.alloc(0);
    return { bytes, end: offset + bytes.length >= size };
  }

  /** The word timings of a succeeded synthesis; `conflict` before. */
  async timings(ownerId: string, id: string): Promise<WordTimingView[]> {
    const synthesis = await this.timed(ownerId, id);
    return synthesis.timings ? wordTimings(synthesis.text, synthesis.timings) : [];
  }

  /** The timings as WebVTT captions, one cue per sentence. */
  async captions(ownerId: string, id: string): Promise<string> {
    const synthesis = await this.timed(ownerId, id);
    return webVtt(synthesis.text, synthesis.timings ?? '{"w":[],"s":[]}');
  }

  private async timed(ownerId: string, id: string): Promise<Synthesis> {
    const synthesis = await this.get(ownerId, id);
    if (synthesis.state !== SynthesisState.SUCCEEDED)
      throw new AppError(
        'conflict',
        `The synthesis has no timings: it is ${synthesis.state}; they are there once it has succeeded.`,
        { state: synthesis.state },
      );
    return synthesis;
  }

  /**
   * `length` bytes of the synthesis's WAV from `offset`, as far as they are rendered: while it
   * runs, from the file its worker is writing (its header says "length unknown"; the samples are
   * those the finished file will have), once it has succeeded from the finished file. Fewer
   * bytes (none) when no more are rendered yet; `end` once the piece reaches the end.
   */
  async stream(
    ownerId: string,
    id: string,
    offset: number,
    length: number,
    format?: EncodedFormat,
  ): Promise<SynthesisStreamPiece> {
    if (length > MAX_AUDIO_READ_BYTES) throw validationError({ length: [`must be at most ${MAX_AUDIO_READ_BYTES}`] });
    const synthesis = await this.get(ownerId, id);
    const { state, error } = synthesis;
    const nothing = Buffer.alloc(0);
    if (state === SynthesisState.SUCCEEDED) {
      // Encoded while it rendered when it was asked for in this format; else encoded now.
      if (format) return { state, error, ...(await this.encodingStream(ownerId, id, format, offset, length)) };
      const audio = this.audioOf(synthesis)!;
      const bytes = await this.readAudio(audio, offset, length);
      return { state, error, bytes, end: offset + bytes.length >= audio.bytes! };
    }
    if (state === SynthesisState.RUNNING && synthesis.workerId) {
      if (format && synthesis.streamFormat !== format) return { state, error, bytes: nothing, end: false }; // encoded once it has succeeded
      // Not there yet (just taken), or already renamed onto its key (done, not yet recorded).
      const bytes =
        (await this.store.read(synthesisPartialKey(synthesis, format), offset, length)) ??
        (await this.store.read(format ? synthesisEncodedKey(id, format) : synthesisAudioKey(id), offset, length));
      return { state, error, bytes: bytes ?? nothing, end: false };
    }
    return { state, error, bytes: nothing, end: state !== SynthesisState.QUEUED && state !== SynthesisState.RUNNING };
  }

  /** `length` bytes of the served file from `offset` (the stored object from `skip + offset`). */
  async readAudio(audio: SynthesisAudio, offset: number, length: number): Promise<Buffer> {
    const problems: Record<string, string[]> = {};
    if (audio.bytes === null) problems.offset = ['the audio is still being encoded; read it with synthesisAudioStream'];
    else if (offset > audio.bytes) problems.offset = [`is past the end of the audio (${audio.bytes} bytes)`];
    if (length > MAX_AUDIO_READ_BYTES) problems.length = [`must be at most ${MAX_AUDIO_READ_BYTES}`];
    if (Object.keys(problems).length) throw validationError(problems);
    const bytes = await this.store.read(audio.key, audio.skip + offset, length);
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
      for (const s of expired) if (s.audioKey) await this.deleteFiles(s.id, s.audioKey);
      await this.dataSource.manager.delete(Synthesis, { id: In(expired.map((s) => s.id)) });
      total += expired.length;
      if (expired.length < batch) return total;
    }
  }
}
