// The OpenAI-compatible speech endpoint, `POST /v1/audio/speech`: a compatibility surface for
// clients written against OpenAI's API (the official SDKs' `audio.speech.create`). It is not
// part of /api/v1 and answers errors in OpenAI's shape, `{ error: { message, type, param, code } }`.
//
// The facade knows only GraphQL, so the request is two steps through the gateway: the
// `synthesizeSpeech` mutation queues an ordinary synthesis (same per-user limits, same workers:
// nothing renders on this thread), then `synthesisStream` reads the WAV its worker is writing,
// piece by piece as it is rendered, until its end; each piece goes out as it comes. A client
// that hangs up cancels the synthesis.
import { NextFunction, Request, Response, Router } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import type { Config } from '../lib/config';
import { jsonBody } from '../lib/large-bodies';
import crypto from 'node:crypto';
import { apiKeyOf } from '../lib/api-keys';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode, isErrorCode } from '../lib/errors';
import { snakeCase } from '../lib/naming';
import { sendJson } from '../lib/http-app';
import { REQUEST_ID_HEADER } from '../lib/request-context';
import type { GraphQLClient } from './graphql-client';
import type { RouteSpec } from './route-spec';
import type { JsonSchema } from './schemas';
import { drained } from './slow-reader';
import { compileValidator } from './validation';

export const OPENAI_SPEECH_PATH = '/v1/audio/speech';

/** Our WAV header (subgraphs/tts/audio/wav.ts writes exactly this): `pcm` is the file without it. */
const WAV_HEADER_BYTES = 44;
const PIECE_BYTES = 512 * 1024;
/** Audio bytes per `speech.audio.delta` event (OpenAI's own deltas are a few KiB each). */
const SSE_DELTA_BYTES = 16 * 1024;

/** What `response_format` may be, the default first (the tts subgraph's SpeechFormat, lower-case). */
export const SPEECH_FORMATS = ['mp3', 'opus', 'flac', 'wav', 'pcm'] as const;
type SpeechFormat = (typeof SPEECH_FORMATS)[number];
const CONTENT_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};
/** The audio's sample rate as a decoder gives it: the endpoint renders at 24 kHz; Opus always decodes at 48. */
const DECODED_RATES: Record<SpeechFormat, number> = { mp3: 24000, opus: 48000, flac: 24000, wav: 24000, pcm: 24000 };
const encoded = (format: SpeechFormat) => format !== 'wav' && format !== 'pcm';

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
      enum: [...SPEECH_FORMATS],
      'x-enum-note':
        'aac is not served: no well-kept AAC encoder exists as JavaScript or WebAssembly; ask for mp3, opus, flac, wav or pcm',
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

/** The endpoint in the OpenAPI document, beside /api/v1. */
export const openAiSpeechOpenApi = {
  [OPENAI_SPEECH_PATH]: {
    post: {
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
              SPEECH_FORMATS.map((f) => [CONTENT_TYPES[f], { schema: { type: 'string', format: 'binary' } }]),
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
    },
  },
};

type Body = {
  model: string;
  input: string;
  voice: string | { id: string };
  speed?: number;
  response_format?: SpeechFormat;
  stream_format?: 'audio' | 'sse';
  stream?: boolean;
};

function sendOpenAiError(
  res: Response,
  code: ErrorCode,
  message: string = DEFAULT_MESSAGES[code],
  param: string | null = null,
  retryAfter?: number,
): void {
  if (res.headersSent) return;
  if (code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  // Every 429 says when to come back (OpenAI's SDKs wait for it before they retry).
  if (retryAfter !== undefined || code === 'rate_limit_exceeded') res.setHeader('Retry-After', String(retryAfter ?? 1));
  sendJson(res, ERROR_STATUS[code], { error: { message, type: code, param, code } });
}

/** The body field a GraphQL argument came from. */
const PARAMS = new Map([
  ['text', 'input'],
  ['voice', 'voice'],
  ['speed', 'speed'],
  ['voice_id', 'voice'],
]);

/**
 * A GraphQL error in OpenAI's terms. `details` are a field's messages only for validation errors;
 * other codes carry figures there (a queue's `limit` and `active`), which are not about a field.
 */
function openAiError(error: GraphQLFormattedError): {
  code: ErrorCode;
  message: string;
  param: string | null;
  retryAfter?: number;
} {
  const ext = (error.extensions ?? {}) as { code?: unknown; details?: unknown; retryAfter?: unknown };
  const code: ErrorCode = isErrorCode(ext.code) ? ext.code : 'internal_error';
  const retryAfter = typeof ext.retryAfter === 'number' ? ext.retryAfter : undefined;
  if (code === 'internal_error') return { code, message: DEFAULT_MESSAGES.internal_error, param: null };
  const [key, messages] =
    code === 'validation_error' && ext.details && typeof ext.details === 'object'
      ? (Object.entries(ext.details)[0] ?? [])
      : [];
  if (key === undefined || !Array.isArray(messages)) return { code, message: error.message, param: null, retryAfter };
  const field = snakeCase(key);
  const param = PARAMS.get(field) ?? field;
  return { code, message: `${param}: ${messages.map(String).join('; ')}`, param, retryAfter };
}

/**
 * The `sub` of a token the gateway has just accepted (it checked the signature); for an API key
 * (lib/api-keys.ts), which holds no subject, the key's hash: its answers are counted per key.
 */
function tokenSubject(authorization: string | undefined): string | undefined {
  const key = apiKeyOf(authorization);
  if (key) return `key:${crypto.createHash('sha256').update(key).digest('base64url')}`;
  try {
    const sub = JSON.parse(Buffer.from(String(authorization).split('.')[1] ?? '', 'base64url').toString('utf8')).sub;
    return typeof sub === 'string' ? sub : undefined;
  } catch {
    return undefined;
  }
}

/** When a refused speech request may try again: an open answer lasts as long as its audio. */
const OPEN_ANSWERS_RETRY_SECONDS = 5;

export function openAiSpeechRouter(graphql: GraphQLClient, config: Config): Router {
  const router = Router();
  const validate = compileValidator({ body: SpeechRequest } as RouteSpec);
  // Answers open per user, counted from the queued synthesis until the answer ends (SPEECH_ANSWERS_PER_USER).
  const openAnswers = new Map<string, number>();
  router.use(jsonBody(config, config.BODY_LIMIT_BYTES));

  router.post('/', async (req: Request, res: Response) => {
    if (!req.headers.authorization)
      return sendOpenAiError(res, 'unauthorized', 'A Bearer access token (as the API key) is required.');
    const problems = validate({ params: {}, query: {}, body: req.body });
    if (problems) {
      const [field, messages] = Object.entries(problems)[0];
      return sendOpenAiError(res, 'validation_error', `${field} ${messages.join('; ')}`, field.split('.')[0]);
    }
    // Refused before anything is queued when already full (a forged `sub` only refuses its sender).
    if ((openAnswers.get(tokenSubject(req.headers.authorization) ?? '') ?? 0) >= config.SPEECH_ANSWERS_PER_USER) {
      return sendOpenAiError(
        res,
        'rate_limit_exceeded',
        `You have ${config.SPEECH_ANSWERS_PER_USER} speech answers open, the most allowed; try again when one has ended.`,
        null,
        OPEN_ANSWERS_RETRY_SECONDS,
      );
    }
    const body = req.body as Body;
    const format: SpeechFormat = body.response_format ?? 'mp3';
    const sse = body.stream_format === 'sse';
    const streamed = body.stream !== false;
    let open = true;
    res.once('close', () => (open = false));

    /** One GraphQL operation; the error answer is sent and null returned when it failed. */
    const run = async (query: string, variables: Record<string, unknown>): Promise<Record<string, any> | null> => {
      let result;
      try {
        result = await graphql.execute({
          query,
          variables,
          clientIp: req.ip ?? '',
          headers: { [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER], authorization: req.headers.authorization },
        });
      } catch (err) {
        req.log.error({ err }, 'gateway unreachable');
        sendOpenAiError(res, 'service_unavailable');
        return null;
      }
      const error = result.errors?.[0];
      if (error) {
        const { code, message, param, retryAfter } = openAiError(error);
        sendOpenAiError(res, code, message, param, retryAfter);
        return null;
      }
      return result.data?.result ?? null;
    };

    const queued = await run(
      'mutation Speech($text: String!, $voice: String!, $speed: Float, $format: SpeechFormat) { result: synthesizeSpeech(text: $text, voice: $voice, speed: $speed, format: $format) { id } }',
      {
        text: body.input,
        voice: typeof body.voice === 'string' ? body.voice : body.voice.id,
        speed: body.speed,
        format: format.toUpperCase(),
      },
    );
    if (!queued) return;
    const id = queued.id as string;
    const cancel = () =>
      graphql
        .execute({
          query: 'mutation StopSpeech($id: ID!) { result: cancelSynthesis(id: $id, keepFinished: true) { outcome } }',
          variables: { id },
          clientIp: req.ip ?? '',
          headers: { [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER], authorization: req.headers.authorization },
        })
        .then(
          (r) =>
            r.errors?.length &&
            req.log.warn({ synthesisId: id, errors: r.errors }, 'could not cancel the synthesis of a speech answer'),
          (err) => req.log.warn({ err, synthesisId: id }, 'could not cancel the synthesis of a speech answer'),
        );

    // Counted only now that the gateway has accepted the token, so that its `sub` is the caller's.
    const user = tokenSubject(req.headers.authorization) ?? '';
    const opened = openAnswers.get(user) ?? 0;
    if (opened >= config.SPEECH_ANSWERS_PER_USER) {
      void cancel();
      const limit = config.SPEECH_ANSWERS_PER_USER;
      return sendOpenAiError(
        res,
        'rate_limit_exceeded',
        `You have ${opened} speech answers open, the most allowed (${limit}); try again when one has ended.`,
        null,
        OPEN_ANSWERS_RETRY_SECONDS,
      );
    }
    openAnswers.set(user, opened + 1);
    res.once('close', () => {
      const left = (openAnswers.get(user) ?? 1) - 1;
      if (left > 0) openAnswers.set(user, left);
      else openAnswers.delete(user);
    });
    const closed = new Promise<void>((resolve) => res.once('close', resolve));

    let ended = false;
    const hungUp = () => {
      // Hung up before the end: the render is canceled, not left to run for nobody (a finished synthesis is kept).
      if (ended) return;
      ended = true;
      req.log.info({ synthesisId: id }, 'speech client disconnected; canceling its synthesis');
      void cancel();
    };
    if (!open) hungUp();
    else res.once('close', hungUp);
    /** Ends the answer: an error status before the first byte, a cut-off stream (never a wrong "complete" file) after. */
    const fail = (code: ErrorCode, message: string, param: string | null = null) => {
      ended = true;
      if (res.headersSent) res.destroy();
      else sendOpenAiError(res, code, message, param);
    };
    /** Why a synthesis that ended has no audio, as the answer; null when it succeeded. */
    const failure = (state: string, error: unknown) => {
      // A failed render is about the input (e.g. audio past SYNTHESIS_MAX_AUDIO_SECONDS); a canceled one was canceled by its owner.
      if (state === 'FAILED')
        return fail('validation_error', `The speech could not be rendered: ${String(error)}`, 'input');
      if (state === 'CANCELED') return fail('conflict', `The synthesis ${id} was canceled before it was rendered.`);
    };
    const startAnswer = (sampleRate: number, length?: number) => {
      res.status(200);
      res.setHeader('X-Synthesis-Id', id);
      res.setHeader('X-Sample-Rate', String(format === 'opus' ? DECODED_RATES.opus : sampleRate));
      if (sse) {
        res.type('text/event-stream');
        res.setHeader('Cache-Control', 'no-cache');
      } else {
        res.type(CONTENT_TYPES[format]);
        if (length !== undefined) res.setHeader('Content-Length', String(length));
      }
    };
    /** Sends bytes of the file (as an SSE delta event with `sse`); false when the client is gone or stopped reading. */
    const send = async (data: Buffer): Promise<boolean> => {
      if (!data.length) return true;
      // Deltas of at most SSE_DELTA_BYTES of audio each, as OpenAI sends them, however much the worker had ready.
      let chunk: Buffer | string = data;
      if (sse) {
        chunk = '';
        for (let at = 0; at < data.length; at += SSE_DELTA_BYTES) {
          const audio = data.subarray(at, at + SSE_DELTA_BYTES).toString('base64');
          chunk += `data: ${JSON.stringify({ type: 'speech.audio.delta', audio })}\n\n`;
        }
      }
      // A reader that takes nothing for SPEECH_WRITE_TIMEOUT_SECONDS is cut off (hungUp cancels the render).
      if (!res.write(chunk) && !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000))) {
        res.destroy();
        return false;
      }
      return true;
    };
    /** The end of the answer: with `sse`, the done event with its usage. */
    const finish = async () => {
      ended = true;
      if (sse) {
        const done = await run('query SpeechDone($id: ID!) { result: synthesis(id: $id) { characters durationMs } }', {
          id,
        });
        if (!done) return void res.destroy();
        const input = Number(done.characters ?? 0);
        const output = Math.ceil(Number(done.durationMs ?? 0) / 20);
        res.write(
          `data: ${JSON.stringify({
            type: 'speech.audio.done',
            usage: { input_tokens: input, output_tokens: output, total_tokens: input + output },
          })}\n\n`,
        );
      }
      res.end();
    };
    const pause = (wait: number) => new Promise((r) => setTimeout(r, wait));

    if (!streamed) {
      // The whole file once rendered: wait for the end, then send what is stored (WAV with its true sizes).
      let lastProgress = Date.now();
      for (let wait = 5; open; wait = Math.min(config.SPEECH_POLL_MS * 4, wait * 2)) {
        const now = await run('query SpeechState($id: ID!) { result: synthesis(id: $id) { state error } }', { id });
        if (!now) return void (ended = true);
        if (now.state === 'SUCCEEDED') break;
        if (now.state !== 'QUEUED' && now.state !== 'RUNNING') return failure(now.state, now.error);
        if (now.state === 'RUNNING') lastProgress = Date.now();
        else if (Date.now() - lastProgress > config.SPEECH_MAX_WAIT_SECONDS * 1000)
          return fail(
            'service_unavailable',
            `The synthesis did not start for ${config.SPEECH_MAX_WAIT_SECONDS} s; it is synthesis ${id} (GET /api/v1/tts/syntheses/${id}).`,
          );
        await pause(wait);
      }
      if (!open) return;
      const meta = await run(
        'query SpeechFile($id: ID!, $format: SpeechFormat!) { result: synthesisAudio(id: $id, format: $format) { bytes } }',
        { id, format: format.toUpperCase() },
      );
      if (!meta) return void (ended = true);
      if (typeof meta.bytes === 'number') {
        const bytes = meta.bytes;
        startAnswer(24000, sse ? undefined : bytes);
        for (let offset = 0; offset < bytes && open;) {
          const piece = await run(
            'query SpeechChunk($id: ID!, $format: SpeechFormat!, $offset: Int!, $length: Int!) { result: synthesisAudio(id: $id, format: $format) { chunk(offset: $offset, length: $length) } }',
            { id, format: format.toUpperCase(), offset, length: Math.min(PIECE_BYTES, bytes - offset) },
          );
          const data = Buffer.from((piece?.chunk as string | undefined) ?? '', 'base64');
          if (!data.length) return fail('internal_error', DEFAULT_MESSAGES.internal_error); // gone mid-way
          offset += data.length;
          if (!(await send(data))) return;
        }
        return finish();
      }
      // Not encoded while it rendered (it is now): streamed as it is encoded, like a streamed answer.
    }

    // Streams the file as the worker renders (and encodes) it: synthesisStream reads the file it
    // is writing; asks again at once after a piece, after a growing pause (to SPEECH_POLL_MS) after none.
    let offset = 0;
    let head = Buffer.alloc(0); // the WAV header, until all 44 bytes are here
    let lastProgress = Date.now();
    const streamFormat = encoded(format) ? format.toUpperCase() : null;
    for (let wait = 5; open;) {
      const piece = await run(
        'query SpeechStream($id: ID!, $offset: Int!, $length: Int!, $format: SpeechFormat) { result: synthesisStream(id: $id, offset: $offset, length: $length, format: $format) { state error chunk end } }',
        { id, offset, length: PIECE_BYTES, format: streamFormat },
      );
      if (!piece) {
        ended = true;
        if (res.headersSent) res.destroy();
        return;
      }
      if (piece.state === 'FAILED' || piece.state === 'CANCELED') return failure(piece.state, piece.error);
      let data = Buffer.from((piece.chunk as string | undefined) ?? '', 'base64');
      offset += data.length;
      if (data.length) {
        lastProgress = Date.now();
        wait = 5;
        if (!res.headersSent) {
          if (encoded(format)) startAnswer(24000);
          else {
            head = Buffer.concat([head, data]);
            if (head.length < WAV_HEADER_BYTES) continue;
            data = head;
            startAnswer(data.readUInt32LE(24));
            if (format === 'pcm') data = data.subarray(WAV_HEADER_BYTES);
          }
        }
        if (!(await send(data))) return;
      }
      if (piece.end) {
        if (!res.headersSent) return fail('internal_error', DEFAULT_MESSAGES.internal_error); // a finished synthesis always has its file
        return finish();
      }
      if (data.length) continue;
      if (Date.now() - lastProgress > config.SPEECH_MAX_WAIT_SECONDS * 1000) {
        return fail(
          'service_unavailable',
          `No audio came for ${config.SPEECH_MAX_WAIT_SECONDS} s; it is synthesis ${id} (GET /api/v1/tts/syntheses/${id}).`,
        );
      }
      await pause(wait);
      wait = Math.min(config.SPEECH_POLL_MS, wait * 2);
    }
  });
  // What the body parser (or anything else) refused, in OpenAI's shape too: never REST's, never a 500 for input.
  router.use(
    (
      err: { type?: string; status?: number; expose?: boolean; message?: string },
      req: Request,
      res: Response,
      _next: NextFunction,
    ) => {
      const status = Number(err?.status);
      if (err?.type === 'entity.too.large')
        return sendOpenAiError(
          res,
          'payload_too_large',
          `The request body is larger than ${config.BODY_LIMIT_BYTES} bytes.`,
        );
      if (err?.type === 'entity.parse.failed')
        return sendOpenAiError(res, 'validation_error', 'The request body is not valid JSON.');
      if (status >= 400 && status < 500) {
        const code =
          status === 415 ? 'unsupported_media_type' : status === 413 ? 'payload_too_large' : 'validation_error';
        return sendOpenAiError(
          res,
          code,
          err.expose && typeof err.message === 'string' ? err.message : DEFAULT_MESSAGES[code],
        );
      }
      req.log.error({ err }, 'speech request failed');
      if (res.headersSent) return void res.destroy();
      sendOpenAiError(res, 'internal_error');
    },
  );
  return router;
}
