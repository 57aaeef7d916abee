// The speech engine behind the TTS subgraph: a small interface, so that eSpeak NG (the
// default) can be replaced by another engine without touching the voice rules.

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

export interface SpeechEngine {
  /** The engine's name, for descriptions and logs. */
  readonly name: string;
  baseVoices(): Promise<BaseVoice[]>;
  /** Every language tag the engine supports, lower-case. */
  languages(): Promise<string[]>;
  /** The language used when a voice names none. */
  readonly defaultLanguage: string;
  stop(): Promise<void>;
}
