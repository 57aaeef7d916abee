// The speech engine behind the TTS subgraph: a small interface, so that eSpeak NG (the
// default) can be replaced by another engine without touching the voice rules.
import type { EncodedFormat } from '../audio/encoders';

export interface BaseVoice {
  /** What `base_voice` and the parts of a `voice_blend` name: `f3`, `m1`, `Annie`. */
  name: string;
  /** The engine's own name for it: `female3`. */
  displayName: string;
  gender: 'female' | 'male' | null;
  /** Language tags it speaks (`en-us`, `de`, …). */
  languages: string[];
  description: string;
}

/** What to say and how: a voice's settings, as stored. */
export interface SpeechRequest {
  text: string;
  baseVoice: string;
  /** When set, spoken with a blend of these base voices instead of `baseVoice`. */
  voiceBlend: string | null;
  language: string;
  /** 1.0 is the engine's normal rate. */
  speed: number;
}

/** How much audio one request may produce: rendering stops there and the request fails. */
export interface SpeechLimits {
  maxSeconds: number;
  /** Aborted when the job is canceled (or its lease lost): rendering stops and the call rejects. */
  signal?: AbortSignal;
  /** The sample rate wanted; the engine's own when left out. */
  sampleRate?: number;
  /**
   * Given: the engine may hand the audio over in pieces, in order, while it renders, each with
   * its sample rate. The whole audio is then these pieces followed by the samples of the answer
   * (which an engine that streams leaves empty, and one that does not fills).
   */
  onAudio?: (samples: Int16Array, sampleRate: number, encoded?: Uint8Array) => void;
  /**
   * Also encode the audio in this format while it renders (in the engine's thread): each piece's
   * encoded bytes come with it to `onAudio`; the answer carries the rest and the patch.
   */
  encode?: EncodedFormat;
}

/** One spoken word: where it lies in the audio (ms) and in the text (code points, end exclusive). */
export interface WordTiming {
  startMs: number;
  endMs: number;
  charStart: number;
  charEnd: number;
}

/** When each word is spoken, and where each sentence starts in the text (code points). */
export interface SpeechTimings {
  words: WordTiming[];
  sentenceStarts: number[];
}

/** Mono 16-bit PCM. */
export interface SpeechAudio {
  sampleRate: number;
  samples: Int16Array;
  /** With `encode`: encoded bytes not yet handed to onAudio, and what to write over the file's start at the end. */
  encoded?: Uint8Array[];
  encodedPatch?: { offset: number; bytes: Uint8Array };
  /** From the engine's own word events, in the delivered audio's time; absent when the engine has none. */
  timings?: SpeechTimings;
}

export interface SpeechEngine {
  /** The engine's name, for descriptions and logs. */
  readonly name: string;
  baseVoices(): Promise<BaseVoice[]>;
  /** Every language tag the engine supports, lower-case. */
  languages(): Promise<string[]>;
  /** The language used when a voice names none. */
  readonly defaultLanguage: string;
  /** Renders speech off the event loop; several calls may run at once. */
  synthesize(request: SpeechRequest, limits: SpeechLimits): Promise<SpeechAudio>;
  stop(): Promise<void>;
}
