import { Directive, Field, Float, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { RequiresScopes } from '../../../lib/scopes';
import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { EncodedFormat, ENCODED_EXTENSIONS, ENCODED_FORMATS } from '../audio/encoders';

export enum SynthesisState {
  QUEUED = 'queued',
  RUNNING = 'running',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
  /** Canceled by its owner while queued or running; it has no audio. */
  CANCELED = 'canceled',
}

/** Queued or running: what counts against SYNTHESIS_QUEUE_PER_USER, and what a cancel stops. */
export const ACTIVE_STATES = [SynthesisState.QUEUED, SynthesisState.RUNNING];

/** Where a synthesis's audio is kept in the audio store. */
export const synthesisAudioKey = (synthesisId: string) => `${synthesisId}.wav`;

/** Where a stored synthesis's encoding in `format` is cached, beside its WAV. */
export const synthesisEncodedKey = (synthesisId: string, format: EncodedFormat) =>
  `${synthesisId}.${ENCODED_EXTENSIONS[format]}`;

/** Every cached encoding's key: what is deleted with the synthesis. */
export const synthesisEncodedKeys = (synthesisId: string) =>
  ENCODED_FORMATS.map((format) => synthesisEncodedKey(synthesisId, format));

/**
 * Where one take of a running job writes its audio while it renders (readable as it grows):
 * one name per worker and attempt, so that a worker that lost its lease never writes into its
 * successor's file. Renamed to synthesisAudioKey when done.
 */
export function synthesisPartialKey(
  job: { id: string; attempts: number; workerId: string | null },
  format?: EncodedFormat,
): string {
  let hash = 0x811c9dc5; // FNV-1a of the worker id: short, and only [0-9a-f] in the key
  for (const c of job.workerId ?? '') hash = Math.imul(hash ^ c.charCodeAt(0), 0x01000193) >>> 0;
  return `${job.id}.${job.attempts}-${hash.toString(16).padStart(8, '0')}${format ? `.${ENCODED_EXTENSIONS[format]}` : ''}.part`;
}
registerEnumType(SynthesisState, {
  name: 'SynthesisState',
  description:
    'queued → running → succeeded or failed; canceled by its owner while queued or running. A job whose worker died is queued work again until its lease ends.',
});

/**
 * A request to speak a text, and the job that does it. The voice's settings are copied in
 * when it is requested, so deleting the voice later does not change what is rendered.
 */
@RequiresScopes('tts:synthesize')
@Directive('@key(fields: "id")')
@ObjectType({
  description:
    'Speech rendered from a text with a voice, asynchronously: poll `state` or follow the synthesis.* events.',
})
@Entity('syntheses')
@Index(['ownerId', 'id'])
@Index(['state', 'leaseUntil'])
@Index('IDX_syntheses_state_owner', ['state', 'ownerId', 'id'])
@Index(['finishedAt'])
export class Synthesis {
  /** UUIDv7: ordered by creation, so queued jobs are taken oldest first. */
  @Field(() => ID)
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Field(() => ID)
  @Column({ name: 'owner_id', type: 'varchar', length: 36 })
  ownerId!: string;

  @Field(() => SynthesisState)
  @Column({ type: 'varchar', length: 16 })
  state!: SynthesisState;

  @Field(() => ID, { nullable: true, description: 'The stored voice it was requested with; null for inline settings.' })
  @Column({ name: 'voice_id', type: 'varchar', length: 36, nullable: true })
  voiceId!: string | null;

  @Field()
  @Column({ name: 'base_voice', type: 'varchar', length: 64 })
  baseVoice!: string;

  @Field(() => String, { nullable: true })
  @Column({ name: 'voice_blend', type: 'varchar', length: 500, nullable: true })
  voiceBlend!: string | null;

  @Field()
  @Column({ type: 'varchar', length: 35 })
  language!: string;

  @Field(() => Float)
  @Column({ type: 'double' })
  speed!: number;

  @Field()
  @Column({ type: 'text' })
  text!: string;

  @Field(() => Int, { description: 'Length of the text in Unicode characters (code points).' })
  @Column({ type: 'integer' })
  characters!: number;

  @Field(() => Int, { nullable: true, description: 'Length of the audio; set when succeeded.' })
  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs!: number | null;

  @Field(() => String, { nullable: true, description: 'Why it failed.' })
  @Column({ type: 'varchar', length: 500, nullable: true })
  error!: string | null;

  @Field(() => Int, { description: 'How many times a worker has taken the job.' })
  @Column({ type: 'integer' })
  attempts!: number;

  /** The worker that holds the job while it runs, and until when (it renews the lease while it works). */
  @Column({ name: 'worker_id', type: 'varchar', length: 100, nullable: true })
  workerId!: string | null;

  @Column({ name: 'lease_until', type: 'datetime', precision: 3, nullable: true })
  leaseUntil!: Date | null;

  /** Where the audio is in the audio store, and its size. */
  @Column({ name: 'audio_key', type: 'varchar', length: 200, nullable: true })
  audioKey!: string | null;

  @Column({ name: 'audio_bytes', type: 'integer', nullable: true })
  audioBytes!: number | null;

  /** The audio's sample rate when asked for one (the OpenAI endpoint's 24 kHz); null: the engine's own. */
  @Field(() => Int, {
    nullable: true,
    description:
      "The audio's sample rate when one was asked for (24,000 for POST /v1/audio/speech); null: the engine's own (22,050 Hz).",
  })
  @Column({ name: 'sample_rate', type: 'integer', nullable: true })
  sampleRate!: number | null;

  /** The format encoded while it renders, beside the WAV (POST /v1/audio/speech's mp3, opus or flac); null: none. */
  @Column({ name: 'stream_format', type: 'varchar', length: 8, nullable: true })
  streamFormat!: string | null;

  /** Bytes of the encodings cached beside the WAV (counted with audioBytes in the audio quota). */
  @Column({ name: 'encoded_bytes', type: 'integer', nullable: true })
  encodedBytes!: number | null;

  /** Word timings, JSON (see synthesis-timings.ts); set when succeeded. */
  @Column({ type: 'text', nullable: true })
  timings!: string | null;

  /** The W3C traceparent of the request that queued it (tracing on), linked from the job's trace. */
  @Column({ name: 'trace_parent', type: 'varchar', length: 55, nullable: true })
  traceParent!: string | null;

  @Field()
  @Column({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  @Column({ name: 'started_at', type: 'datetime', precision: 3, nullable: true })
  startedAt!: Date | null;

  @Field(() => Date, { nullable: true })
  @Column({ name: 'finished_at', type: 'datetime', precision: 3, nullable: true })
  finishedAt!: Date | null;
}
