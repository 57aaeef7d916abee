// The OpenAI-compatible speech endpoint, `POST /v1/audio/speech`: a compatibility surface for
// clients written against OpenAI's API (the official SDKs' `audio.speech.create`). It is not
// part of /api/v1 and answers errors in OpenAI's shape, `{ error: { message, type, param, code } }`.
//
// It runs in the REST facade's process and reaches the module only through GraphQL (the
// facade's MountHost), so the request is two steps through the gateway: the `synthesizeSpeech`
// mutation queues an ordinary synthesis (same per-user limits, same workers: nothing renders on
// this thread), then `synthesisStream` reads the WAV its worker is writing, piece by piece as it
// is rendered, until its end; each piece goes out as it comes. A client that hangs up cancels
// the synthesis.
import { Request, Response, Router } from 'express';
import { DEFAULT_MESSAGES, ErrorCode } from '../../../lib/errors';
import { jsonBody } from '../../../lib/large-bodies';
import { REQUEST_ID_HEADER } from '../../../lib/request-context';
import type { MountHost, RouteSpec } from '../../../rest-facade/route-spec';
import { drained } from '../../../rest-facade/slow-reader';
import { compileValidator } from '../../../rest-facade/validation';
import { AUDIO_CONTENT_TYPES, AudioFormat, isEncoded } from '../audio/encoders';
import { WAV_HEADER_BYTES } from '../audio/wav';
import { OpenAnswers, tokenSubject } from './open-answers';
import { openAiError, refusedInOpenAiShape, sendOpenAiError } from './speech-errors';
import { SpeechRequest } from './speech-openapi';
import { SPEECH_OPERATIONS } from './speech-operations';

const PIECE_BYTES = 512 * 1024;
/** Audio bytes per `speech.audio.delta` event (OpenAI's own deltas are a few KiB each). */
const SSE_DELTA_BYTES = 16 * 1024;
/** The audio's sample rate as a decoder gives it: the endpoint renders at 24 kHz; Opus always decodes at 48. */
const OPUS_DECODED_RATE = 48000;

/** When a refused speech request may try again: an open answer lasts as long as its audio. */
const OPEN_ANSWERS_RETRY_SECONDS = 5;

type Body = {
  model: string;
  input: string;
  voice: string | { id: string };
  speed?: number;
  response_format?: AudioFormat;
  stream_format?: 'audio' | 'sse';
  stream?: boolean;
};

/** An operation's `result`: GraphQL's JSON, read field by field. */
type Answer = Record<string, unknown>;

export function speechRouter({ graphql, config }: MountHost): Router {
  const router = Router();
  const validate = compileValidator({ body: SpeechRequest } as RouteSpec);
  const openAnswers = new OpenAnswers();
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
    if (openAnswers.count(tokenSubject(req.headers.authorization) ?? '') >= config.SPEECH_ANSWERS_PER_USER) {
      return sendOpenAiError(
        res,
        'rate_limit_exceeded',
        `You have ${config.SPEECH_ANSWERS_PER_USER} speech answers open, the most allowed; try again when one has ended.`,
        null,
        OPEN_ANSWERS_RETRY_SECONDS,
      );
    }
    const body = req.body as Body;
    const format: AudioFormat = body.response_format ?? 'mp3';
    const sse = body.stream_format === 'sse';
    const streamed = body.stream !== false;
    let open = true;
    res.once('close', () => (open = false));

    /** One GraphQL operation; the error answer is sent and null returned when it failed. */
    const run = async (query: string, variables: Record<string, unknown>): Promise<Answer | null> => {
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
      return (result.data?.result as Answer | undefined) ?? null;
    };

    const queued = await run(SPEECH_OPERATIONS.queue, {
      text: body.input,
      voice: typeof body.voice === 'string' ? body.voice : body.voice.id,
      speed: body.speed,
      format: format.toUpperCase(),
    });
    if (!queued) return;
    const id = queued.id as string;
    const cancel = () =>
      graphql
        .execute({
          query: SPEECH_OPERATIONS.cancel,
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
    const opened = openAnswers.count(user);
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
    openAnswers.hold(user, res);
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
    const failure = (state: unknown, error: unknown) => {
      // A failed render is about the input (e.g. audio past SYNTHESIS_MAX_AUDIO_SECONDS); a canceled one was canceled by its owner.
      if (state === 'FAILED')
        return fail('validation_error', `The speech could not be rendered: ${String(error)}`, 'input');
      if (state === 'CANCELED') return fail('conflict', `The synthesis ${id} was canceled before it was rendered.`);
    };
    const startAnswer = (sampleRate: number, length?: number) => {
      res.status(200);
      res.setHeader('X-Synthesis-Id', id);
      res.setHeader('X-Sample-Rate', String(format === 'opus' ? OPUS_DECODED_RATE : sampleRate));
      if (sse) {
        res.type('text/event-stream');
        res.setHeader('Cache-Control', 'no-cache');
      } else {
        res.type(AUDIO_CONTENT_TYPES[format]);
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
        const done = await run(SPEECH_OPERATIONS.done, { id });
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
        const now = await run(SPEECH_OPERATIONS.state, { id });
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
      const meta = await run(SPEECH_OPERATIONS.file, { id, format: format.toUpperCase() });
      if (!meta) return void (ended = true);
      if (typeof meta.bytes === 'number') {
        const bytes = meta.bytes;
        startAnswer(24000, sse ? undefined : bytes);
        for (let offset = 0; offset < bytes && open;) {
          const piece = await run(SPEECH_OPERATIONS.chunk, {
            id,
            format: format.toUpperCase(),
            offset,
            length: Math.min(PIECE_BYTES, bytes - offset),
          });
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
    const streamFormat = isEncoded(format) ? format.toUpperCase() : null;
    for (let wait = 5; open;) {
      const piece = await run(SPEECH_OPERATIONS.stream, { id, offset, length: PIECE_BYTES, format: streamFormat });
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
          if (isEncoded(format)) startAnswer(24000);
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
  router.use(refusedInOpenAiShape(config));
  return router;
}
