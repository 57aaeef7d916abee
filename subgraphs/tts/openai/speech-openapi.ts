// The OpenAI-compatible speech endpoint's request and its operation in the OpenAPI document
// (OpenAI's `POST /v1/audio/speech`, beside /api/v1; the handler is speech-router.ts).
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode } from '../../../lib/errors';
import type { JsonSchema } from '../../../rest-facade/schemas';
import { AAC_REFUSAL, AUDIO_CONTENT_TYPES, AUDIO_FORMATS } from '../audio/encoders';

export const SpeechRequest: JsonSchema = {
  type: 'object',
  required: ['model', 'input', 'voice'],
  additionalProperties: false,
  properties: {
    model: {
      type: 'string',
      minLength: 1,
      maxLength: 100,
      description: 'Accepted and ignored (e.g. tts-1): there is one engine',
      example: 'tts-1',
    },
    input: { type: 'string', minLength: 1, maxLength: 10000, description: 'What to say: 1 to 10,000 characters' },
    voice: {
      description:
        'One of your voice ids (also as `{ "id": … }`), a base voice name (GET /api/v1/tts/base-voices), a blend such as f3(2)+m3, ' +
        "or one of OpenAI's voice names, spoken by a base voice: alloy f3, ash m3, ballad m2, coral f2, echo m1, fable m4, onyx m7, nova f4, sage f5, shimmer f1, verse m5",
      anyOf: [
        { type: 'string', minLength: 1, maxLength: 500 },
        { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 500 } } },
      ],
      example: 'f3',
    },
    speed: {
      type: 'number',
      minimum: 0.25,
      maximum: 4,
      description: "0.25 to 4.0; default 1.0, or the stored voice's speed",
    },
    response_format: {
      type: 'string',
      enum: [...AUDIO_FORMATS],
      'x-enum-note': AAC_REFUSAL,
      description:
        "mp3 (the default, as OpenAI's: LAME, 64 kbit/s mono, 24 kHz), opus (Ogg Opus, 48 kHz, 32 kbit/s), flac (24 kHz 16-bit), " +
        'wav (mono 16-bit, 24 kHz; streamed, so its sizes say 0xFFFFFFFF, unless `stream` is false) or pcm (the samples ' +
        "without a header: 16-bit little-endian mono, 24 kHz, as OpenAI's). Each is encoded while it renders and streams as it " +
        'is encoded. aac is refused (400): no well-kept AAC encoder exists as JavaScript or WebAssembly.',
    },
    stream_format: {
      type: 'string',
      enum: ['audio', 'sse'],
      description:
        "audio (the default): the file itself; sse: OpenAI's Server-Sent Events, `speech.audio.delta` events with base64 " +
        'pieces of the file (at most 16 KiB each) in `response_format`, then one `speech.audio.done` with `usage` (there are no tokens: ' +
        "`input_tokens` counts the input's characters, `output_tokens` the audio's 20 ms frames).",
    },
    stream: {
      type: 'boolean',
      description:
        "Kokoro-FastAPI's: true (the default) streams the audio while it renders; false answers the whole file once rendered, " +
        'with Content-Length and, for wav, its true sizes.',
    },
    instructions: { type: 'string', maxLength: 4096, description: 'Accepted and ignored' },
  },
};

/** Its operation in the OpenAPI document, beside /api/v1. */
export const speechOperation = {
  operationId: 'createSpeech',
  tags: ['OpenAI compatibility'],
  summary: 'Speak a text, OpenAI style (synchronous): the audio is the answer',
  description:
    "A compatibility surface for clients written against OpenAI's `POST /v1/audio/speech` (e.g. the official SDKs' " +
    "`audio.speech.create`, with this server's URL + `/v1` as base URL and an access token as the API key). It queues an " +
    'ordinary synthesis (listed under /api/v1/tts/syntheses, with the same per-user limits and the same workers) and **streams ' +
    'the audio while it renders**: the worker writes the WAV as the engine hands it over (about 100 ms of audio a piece, already ' +
    'stretched and resampled), and this endpoint sends each piece as it is written (chunked, no Content-Length), reading it ' +
    'through the GraphQL query `synthesisStream` (the facade knows only GraphQL operations; this works alike in one process and ' +
    'with separate facade, gateway, subgraph and worker processes sharing the database and the audio folder). `wav` is mono ' +
    '16-bit PCM at 24,000 Hz whose RIFF and data sizes say 0xFFFFFFFF (length unknown, as OpenAI and Kokoro stream WAV; the real sizes when the render had ended before the first byte, or with `stream: false`); ' +
    "`pcm` is the same samples without the header (16-bit little-endian mono, 24 kHz, as OpenAI's). `mp3` (the default), `opus` (Ogg Opus) and `flac` " +
    "are encoded in the engine's thread while it renders, kept beside the WAV (GET /api/v1/tts/syntheses/{id}/audio?format=) and streamed as they are encoded; " +
    '`stream_format: "sse"` answers OpenAI\'s `speech.audio.delta` / `speech.audio.done` events instead; `stream: false` answers the whole file with Content-Length once rendered. `model` is accepted and ' +
    'ignored; `voice` is a base voice, a blend, one of your voice ids or an OpenAI voice name (alloy f3, ash m3, ballad m2, ' +
    'coral f2, echo m1, fable m4, onyx m7, nova f4, sage f5, shimmer f1, verse m5). Before the first byte, errors are ' +
    'OpenAI-shaped: `{ "error": { "message", "type", "param", "code" } }` with `type` and `code` one of this API\'s error ' +
    'codes (a failed render 400 with its reason, a canceled synthesis 409, no audio for SPEECH_MAX_WAIT_SECONDS 503); after it, ' +
    'a failure cuts the connection, so a truncated answer is never mistaken for a whole one. A client that disconnects before ' +
    'the end cancels the synthesis (its render stops and leaves no audio), and so does one that takes nothing for ' +
    'SPEECH_WRITE_TIMEOUT_SECONDS (60): it is cut off. At most SPEECH_ANSWERS_PER_USER (3) answers are open per user at once; ' +
    'more are 429 `rate_limit_exceeded` with `Retry-After`, as is a full synthesis queue. Past the kept-audio quota ' +
    '(AUDIO_BYTES_PER_USER, 1 GiB) a request is 409 `conflict`.',
  security: [{ bearerAuth: [] }],
  requestBody: { required: true, content: { 'application/json': { schema: SpeechRequest } } },
  responses: {
    200: {
      description:
        'The audio, in `response_format`\'s type; with `stream_format: "sse"`, `text/event-stream`: ' +
        '`data: {"type":"speech.audio.delta","audio":"<base64>"}` events, then `data: {"type":"speech.audio.done","usage":{…}}`',
      headers: {
        'X-Synthesis-Id': {
          schema: { type: 'string', format: 'uuid' },
          description: 'The synthesis it was rendered as',
        },
        'X-Sample-Rate': {
          schema: { type: 'integer', example: 24000 },
          description: 'Samples a second as decoded: 24000 (48000 for opus)',
        },
      },
      content: {
        ...Object.fromEntries(
          AUDIO_FORMATS.map((f) => [AUDIO_CONTENT_TYPES[f], { schema: { type: 'string', format: 'binary' } }]),
        ),
        'text/event-stream': { schema: { type: 'string' } },
      },
    },
    ...Object.fromEntries(
      (
        [
          'validation_error',
          'unauthorized',
          'not_found',
          'conflict',
          'rate_limit_exceeded',
          'internal_error',
          'service_unavailable',
        ] as ErrorCode[]
      ).map((code) => [
        ERROR_STATUS[code],
        {
          description: `\`${code}\`: ${DEFAULT_MESSAGES[code]}`,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  error: {
                    type: 'object',
                    properties: {
                      message: { type: 'string' },
                      type: { type: 'string' },
                      param: { type: 'string', nullable: true },
                      code: { type: 'string' },
                    },
                  },
                },
              },
            },
          },
        },
      ]),
    ),
  },
};
