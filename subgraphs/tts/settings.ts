// The tts module's settings that only the module reads: its fragment of the configuration
// (lib/config.ts merges it; each `.describe()` is the setting's row in docs/configuration.md,
// written by `npm run docs:config`), the OpenAI-compatible speech endpoint's (subgraphs/tts/openai/) included.
import path from 'node:path';
import { z } from 'zod';
import type { Config, SettingKinds } from '../../lib/config';

export const ttsSettings = ({ int }: SettingKinds) => ({
  AUDIO_DIR: z
    .string()
    .optional()
    .describe(
      'where rendered speech is stored (one WAV per synthesis); every TTS process must see the same folder (unless `BLOB_STORE_URL` is set)',
    )
    .meta({ shownDefault: '`DATA_DIR/audio`' }),
  AUDIO_BYTES_PER_USER: int(1, Number.MAX_SAFE_INTEGER)
    .default(1024 ** 3)
    .describe(
      'rendered audio one user keeps (1 GiB), counted when a synthesis is requested; past it 409 `conflict` with `details.limit`',
    ),
  SYNTHESIS_MAX_AUDIO_SECONDS: int(10, 6 * 3600)
    .default(3600)
    .describe(
      'longest audio one synthesis may produce; longer fails the job (10,000 characters of prose last about 40 minutes at speed 0.25; numbers and symbols can make them last hours, and the audio is held in memory while it renders)',
    ),
  SYNTHESIS_QUEUE_PER_USER: int(1, 100_000)
    .default(10)
    .describe(
      "a user's syntheses queued or running at once; one more is refused with 429 `rate_limit_exceeded` (`Retry-After: 10`, `details.limit`) until one finishes or is canceled",
    ),
  VOICES_PER_USER: int(1, 100_000_000)
    .default(1000)
    .describe('voices one user keeps; past it a create is 409 `conflict` with `details: { limit, max, count }`'),
  AUDIO_ENCODER_THREADS: int(1, 64)
    .default(2)
    .describe(
      'worker threads of a tts subgraph process that encode stored syntheses into MP3, Opus or FLAC (`GET /api/v1/tts/syntheses/{id}/audio?format=`), each taking several encodings in turn; made on first use',
    ),
  SYNTHESIS_CONCURRENCY: int(0, 64)
    .default(1)
    .describe(
      'syntheses this process renders at once, each in an eSpeak NG thread of its own; `0`: none (leave them to `npm run start:worker`)',
    ),
  SYNTHESIS_LEASE_SECONDS: int(2, 3600)
    .default(30)
    .describe('a running job whose worker stopped renewing its lease for this long is taken by another worker'),
  SYNTHESIS_MAX_ATTEMPTS: int(1, 100)
    .default(3)
    .describe('takes of one job (workers that died on it) before it is failed instead'),
  SYNTHESIS_HEARTBEAT_SECONDS: int(1, 300)
    .default(5)
    .describe(
      'how often each synthesis worker writes its heartbeat into the tts database; one silent for 3 periods no longer counts as live',
    ),
  SYNTHESIS_POLL_MS: int(5, 60_000)
    .default(200)
    .describe(
      'how often idle workers look for jobs queued by other processes (jobs of their own process wake them at once)',
    ),
  SYNTHESIS_RETENTION_SECONDS: int(60, 3650 * 86_400)
    .default(7 * 86_400)
    .describe('finished syntheses and their audio are deleted this long (7 days) after they finished'),
  SPEECH_ANSWERS_PER_USER: int(1, 100_000)
    .default(3)
    .describe(
      "speech answers one user may have open at once, per facade process, until the answer ends; beyond: 429 with `Retry-After` in OpenAI's error shape",
    ),
  SPEECH_MAX_WAIT_SECONDS: int(1, 3600)
    .default(300)
    .describe(
      'how long `POST /v1/audio/speech` (OpenAI-compatible) waits for audio, first or next, before giving up: 503 before the first byte (the synthesis goes on; its id is in the message), a cut stream after',
    ),
  SPEECH_POLL_MS: int(5, 10_000)
    .default(50)
    .describe(
      "longest pause between the speech endpoint's looks at a synthesis with no new audio (5 ms, doubling); after a piece it looks again at once",
    ),
});

declare module '../../lib/config' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- declaration merging: the module's settings join Config
  interface ModuleSettings extends z.output<z.ZodObject<ReturnType<typeof ttsSettings>>> {}
}

/** Where rendered speech is kept on disk (BLOB_STORE_URL unset): AUDIO_DIR, else DATA_DIR/audio. */
export const audioDir = (config: Pick<Config, 'AUDIO_DIR' | 'dataDir'>): string =>
  path.resolve(config.AUDIO_DIR ?? path.join(config.dataDir, 'audio'));
