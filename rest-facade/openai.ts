// The OpenAI-compatible speech endpoint, `POST /v1/audio/speech`: a compatibility surface for
// clients written against OpenAI's API (the official SDKs' `audio.speech.create`). It is not
// part of /api/v1 and answers errors in OpenAI's shape, `{ error: { message, type, param, code } }`.
//
// The facade knows only GraphQL, so the request is three steps through the gateway: the
// `synthesizeSpeech` mutation queues an ordinary synthesis (same per-user limits, same workers:
// nothing renders on this thread), `synthesis(id)` is polled until the job has ended, and the
// audio is streamed in pieces through `synthesisAudio.chunk`, as GET …/audio does.
import express, { Request, Response, Router } from 'express';
import type { Config } from '../lib/config';
import { DEFAULT_MESSAGES, ERROR_STATUS, ErrorCode, isErrorCode } from '../lib/errors';
import { REQUEST_ID_HEADER } from '../lib/request-context';
import type { GraphQLClient } from './graphql-client';
import type { RouteSpec } from './route-spec';
import type { JsonSchema } from './schemas';
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
    model: { type: 'string', minLength: 1, maxLength: 100, description: 'Accepted and ignored (e.g. tts-1): there is one engine', example: 'tts-1' },
    input: { type: 'string', minLength: 1, maxLength: 10000, description: 'What to say: 1 to 10,000 characters' },
    voice: {
      description: 'One of your voice ids (also as `{ "id": … }`), a base voice name (GET /api/v1/tts/base-voices) or a blend such as f3(2)+m3',
      anyOf: [
        { type: 'string', minLength: 1, maxLength: 500 },
        { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 500 } } },
      ],
      example: 'f3',
    },
    speed: { type: 'number', minimum: 0.25, maximum: 4, description: "0.25 to 4.0; default 1.0, or the stored voice's speed" },
    response_format: { type: 'string', enum: ['wav', 'pcm'], default: 'wav', description: 'wav (mono 16-bit, 22,050 Hz), or pcm: the same samples without the header' },
    stream_format: { type: 'string', enum: ['audio'], description: 'Only audio (no SSE)' },
    instructions: { type: 'string', maxLength: 4096, description: 'Accepted and ignored' },
  },
};

/** The endpoint in the OpenAPI document, beside /api/v1. */
export const openAiSpeechOpenApi = {
  [OPENAI_SPEECH_PATH]: {
    post: {
      tags: ['OpenAI compatibility'],
      summary: 'Speak a text, OpenAI style (synchronous): the audio is the answer',
      description:
        'A compatibility surface for clients written against OpenAI\'s `POST /v1/audio/speech` (e.g. the official SDKs\' ' +
        '`audio.speech.create`, with this server\'s URL + `/v1` as base URL and an access token as the API key). It queues an ' +
        'ordinary synthesis (listed under /api/v1/tts/syntheses, with the same per-user limits and the same workers), waits for it ' +
        '(at most SPEECH_MAX_WAIT_SECONDS, 300 s) and then streams the audio in pieces: `wav` (mono 16-bit PCM, 22,050 Hz) or `pcm` ' +
        '(the same samples, little-endian, without the header; note 22,050 Hz, not OpenAI\'s 24 kHz). The first byte is sent once ' +
        'rendering has finished, not while it runs. `model` is accepted and ignored; `voice` is a base voice, a blend or one of ' +
        'your voice ids. Errors are OpenAI-shaped: `{ "error": { "message", "type", "param", "code" } }` with `type` and `code` ' +
        'one of this API\'s error codes.',
      security: [{ bearerAuth: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: SpeechRequest } } },
      responses: {
        200: {
          description: 'The audio',
          headers: { 'X-Synthesis-Id': { schema: { type: 'string', format: 'uuid' }, description: 'The synthesis it was rendered as' } },
          content: { 'audio/wav': { schema: { type: 'string', format: 'binary' } }, 'audio/pcm': { schema: { type: 'string', format: 'binary' } } },
        },
        ...Object.fromEntries(
          (['validation_error', 'unauthorized', 'not_found', 'conflict', 'rate_limit_exceeded', 'internal_error', 'service_unavailable'] as ErrorCode[]).map((code) => [
            ERROR_STATUS[code],
            {
              description: `\`${code}\`: ${DEFAULT_MESSAGES[code]}`,
              content: { 'application/json': { schema: { type: 'object', properties: { error: { type: 'object', properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: 'string', nullable: true }, code: { type: 'string' } } } } } } },
            },
          ]),
        ),
      },
    },
  },
};

type Body = { model: string; input: string; voice: string | { id: string }; speed?: number; response_format?: 'wav' | 'pcm' };

function sendOpenAiError(res: Response, code: ErrorCode, message: string = DEFAULT_MESSAGES[code], param: string | null = null, retryAfter?: number): void {
  if (res.headersSent) return;
  if (code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  if (retryAfter !== undefined) res.setHeader('Retry-After', String(retryAfter));
  res.status(ERROR_STATUS[code]).json({ error: { message, type: code, param, code } });
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The body field a GraphQL argument came from. */
const PARAMS: Record<string, string> = { text: 'input', voice: 'voice', speed: 'speed', voice_id: 'voice' };

export function openAiSpeechRouter(graphql: GraphQLClient, config: Config): Router {
  const router = Router();
  const validate = compileValidator({ body: SpeechRequest } as RouteSpec);
  router.use(express.json({ limit: config.BODY_LIMIT_BYTES }));

  router.post('/', async (req: Request, res: Response) => {
    if (!req.headers.authorization) return sendOpenAiError(res, 'unauthorized', 'A Bearer access token (as the API key) is required.');
    const problems = validate({ params: {}, query: {}, body: req.body });
    if (problems) {
      const [field, messages] = Object.entries(problems)[0];
      return sendOpenAiError(res, 'validation_error', `${field} ${messages.join('; ')}`, field.split('.')[0]);
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
          query, variables, clientIp: req.ip ?? '',
          headers: { [REQUEST_ID_HEADER]: req.headers[REQUEST_ID_HEADER], authorization: req.headers.authorization },
        });
      } catch (err) {
        req.log.error({ err }, 'gateway unreachable');
        sendOpenAiError(res, 'service_unavailable');
        return null;
      }
      const error = result.errors?.[0];
      if (error) {
        const ext = (error.extensions ?? {}) as { code?: unknown; details?: Record<string, string[]>; retryAfter?: number };
        const code: ErrorCode = isErrorCode(ext.code) ? ext.code : 'internal_error';
        const field = ext.details ? snake(Object.keys(ext.details)[0]) : null;
        const message = code === 'internal_error' ? DEFAULT_MESSAGES.internal_error
          : field && ext.details ? `${PARAMS[field] ?? field}: ${ext.details[Object.keys(ext.details)[0]].join('; ')}` : error.message;
        sendOpenAiError(res, code, message, field && (PARAMS[field] ?? field), ext.retryAfter);
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

    // Until the job ends: a short wait first (short texts render in a fraction of a second), longer later.
    const deadline = Date.now() + config.SPEECH_MAX_WAIT_SECONDS * 1000;
    let bytes: number | undefined;
    for (let wait = 25; open; wait = Math.min(500, wait * 1.5)) {
      const state = await run('query SpeechState($id: ID!) { result: synthesis(id: $id) { state error audio { bytes } } }', { id });
      if (!state) return;
      if (state.state === 'SUCCEEDED') {
        bytes = state.audio?.bytes;
        break;
      }
      // A failed render is about the input (e.g. audio past SYNTHESIS_MAX_AUDIO_SECONDS); a canceled one was canceled by its owner.
      if (state.state === 'FAILED') return sendOpenAiError(res, 'validation_error', `The speech could not be rendered: ${state.error}`, 'input');
      if (state.state !== 'QUEUED' && state.state !== 'RUNNING') {
        return sendOpenAiError(res, 'conflict', `The synthesis ${id} was ${state.state.toLowerCase()} before it was rendered.`);
      }
      if (Date.now() > deadline) {
        return sendOpenAiError(res, 'service_unavailable', `The speech was not rendered within ${config.SPEECH_MAX_WAIT_SECONDS} s; it is synthesis ${id} (GET /api/v1/tts/syntheses/${id}).`);
      }
      await new Promise((r) => setTimeout(r, wait));
    }
    if (!open || bytes === undefined) return;

    const start = format === 'pcm' ? WAV_HEADER_BYTES : 0;
    res.status(200);
    res.type(format === 'pcm' ? 'audio/pcm' : 'audio/wav');
    res.setHeader('Content-Length', String(bytes - start));
    res.setHeader('X-Synthesis-Id', id);
    res.setHeader('X-Sample-Rate', '22050');
    for (let at = start; at < bytes && open; ) {
      const piece = await run(
        'query SpeechAudio($id: ID!, $offset: Int!, $length: Int!) { result: synthesisAudio(id: $id) { chunk(offset: $offset, length: $length) } }',
        { id, offset: at, length: Math.min(PIECE_BYTES, bytes - at) },
      );
      const data = Buffer.from((piece?.chunk as string | undefined) ?? '', 'base64');
      if (!data.length) return void res.destroy(); // the audio went away mid-way: cut short, never a wrong length
      at += data.length;
      if (!res.write(data)) await new Promise((r) => res.once('drain', r).once('close', r));
    }
    res.end();
  });
  return router;
}
