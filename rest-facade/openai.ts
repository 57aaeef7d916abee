// The OpenAI-compatible speech endpoint, `POST /v1/audio/speech`: a compatibility surface for
// clients written against OpenAI's API (the official SDKs' `audio.speech.create`). It is not
// part of /api/v1 and answers errors in OpenAI's shape, `{ error: { message, type, param, code } }`.
//
// The facade knows only GraphQL, so the request is two steps through the gateway: the
// `synthesizeSpeech` mutation queues an ordinary synthesis (same per-user limits, same workers:
// nothing renders on this thread), then `synthesisStream` reads the WAV its worker is writing,
// piece by piece as it is rendered, until its end; each piece goes out as it comes. A client
// that hangs up cancels the synthesis.
import express, { NextFunction, Request, Response, Router } from 'express';
import type { GraphQLFormattedError } from 'graphql';
import type { Config } from '../lib/config';
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
      enum: ['wav', 'pcm'],
      description:
        "wav (mono 16-bit, 24 kHz; streamed, so its sizes say 0xFFFFFFFF; the format when left out), or pcm: the samples without the header (16-bit little-endian mono, 24 kHz, as OpenAI's)",
    },
    stream_format: { type: 'string', enum: ['audio'], description: 'Only audio (no SSE)' },
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
        '16-bit PCM at 24,000 Hz whose RIFF and data sizes say 0xFFFFFFFF (length unknown, as OpenAI and Kokoro stream WAV; the real sizes when the render had ended before the first byte); ' +
        "`pcm` is the same samples without the header (16-bit little-endian mono, 24 kHz, as OpenAI's). `model` is accepted and " +
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
          description: 'The audio',
          headers: {
            'X-Synthesis-Id': {
              schema: { type: 'string', format: 'uuid' },
              description: 'The synthesis it was rendered as',
            },
            'X-Sample-Rate': { schema: { type: 'integer', example: 24000 }, description: 'Samples a second: 24000' },
          },
          content: {
            'audio/wav': { schema: { type: 'string', format: 'binary' } },
            'audio/pcm': { schema: { type: 'string', format: 'binary' } },
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
  response_format?: 'wav' | 'pcm';
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
  router.use(express.json({ limit: config.BODY_LIMIT_BYTES }));

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
    const format = body.response_format ?? 'wav';
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
      'mutation Speech($text: String!, $voice: String!, $speed: Float) { result: synthesizeSpeech(text: $text, voice: $voice, speed: $speed) { id } }',
      { text: body.input, voice: typeof body.voice === 'string' ? body.voice : body.voice.id, speed: body.speed },
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

    // Streams the WAV as the worker renders it (synthesisStream reads the file it is writing):
    // asks again at once after a piece, after a growing pause (to SPEECH_POLL_MS) after none.
    let ended = false;
    let offset = 0;
    let head = Buffer.alloc(0); // the WAV header, until all 44 bytes are here
    let lastProgress = Date.now();
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
    for (let wait = 5; open;) {
      const piece = await run(
        'query SpeechStream($id: ID!, $offset: Int!, $length: Int!) { result: synthesisStream(id: $id, offset: $offset, length: $length) { state error chunk end } }',
        { id, offset, length: PIECE_BYTES },
      );
      if (!piece) {
        ended = true;
        if (res.headersSent) res.destroy();
        return;
      }
      // A failed render is about the input (e.g. audio past SYNTHESIS_MAX_AUDIO_SECONDS); a canceled one was canceled by its owner.
      if (piece.state === 'FAILED')
        return fail('validation_error', `The speech could not be rendered: ${piece.error}`, 'input');
      if (piece.state === 'CANCELED')
        return fail('conflict', `The synthesis ${id} was canceled before it was rendered.`);
      let data = Buffer.from((piece.chunk as string | undefined) ?? '', 'base64');
      offset += data.length;
      if (data.length) {
        lastProgress = Date.now();
        wait = 5;
        if (!res.headersSent) {
          head = Buffer.concat([head, data]);
          if (head.length < WAV_HEADER_BYTES) continue;
          data = head;
          res.status(200);
          res.type(format === 'pcm' ? 'audio/pcm' : 'audio/wav');
          res.setHeader('X-Synthesis-Id', id);
          res.setHeader('X-Sample-Rate', String(data.readUInt32LE(24)));
          if (format === 'pcm') data = data.subarray(WAV_HEADER_BYTES);
        }
        // A reader that takes nothing for SPEECH_WRITE_TIMEOUT_SECONDS is cut off (hungUp cancels the render).
        if (
          data.length &&
          !res.write(data) &&
          !(await drained(res, closed, config.SPEECH_WRITE_TIMEOUT_SECONDS * 1000))
        ) {
          res.destroy();
          return;
        }
      }
      if (piece.end) {
        ended = true;
        if (!res.headersSent) return fail('internal_error', DEFAULT_MESSAGES.internal_error); // a finished synthesis always has its header
        return void res.end();
      }
      if (data.length) continue;
      if (Date.now() - lastProgress > config.SPEECH_MAX_WAIT_SECONDS * 1000) {
        return fail(
          'service_unavailable',
          `No audio came for ${config.SPEECH_MAX_WAIT_SECONDS} s; it is synthesis ${id} (GET /api/v1/tts/syntheses/${id}).`,
        );
      }
      await new Promise((r) => setTimeout(r, wait));
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
