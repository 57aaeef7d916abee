// How a voice speaks, checked against the speech engine's catalog: shared by stored voices
// and by syntheses requested with inline settings.
import { validationError } from '../../lib/errors';
import { parseBlend } from './engine/blend';
import type { SpeechEngine } from './engine/speech-engine';

export const DEFAULT_SPEED = 1.0;

export interface VoiceSettingsInput {
  baseVoice: string;
  voiceBlend?: string | null;
  language?: string | null;
  speed?: number | null;
}

export interface VoiceSettings {
  baseVoice: string;
  voiceBlend: string | null;
  language: string;
  speed: number;
}

/** The settings with names in their catalog spelling and defaults filled; `validation_error` naming each bad one. */
export async function checkVoiceSettings(engine: SpeechEngine, input: VoiceSettingsInput): Promise<VoiceSettings> {
  const [voices, languages] = await Promise.all([engine.baseVoices(), engine.languages()]);
  const byName = new Map(voices.map((v) => [v.name.toLowerCase(), v.name]));
  const problems: Record<string, string[]> = {};

  const baseVoice = byName.get(input.baseVoice.trim().toLowerCase());
  if (!baseVoice)
    problems.baseVoice = [`"${input.baseVoice}" is not a base voice of the speech engine (see the base voices list)`];

  let voiceBlend: string | null = null;
  if (input.voiceBlend != null) {
    const parsed = parseBlend(input.voiceBlend);
    if ('problems' in parsed) problems.voiceBlend = parsed.problems;
    else {
      const unknown = parsed.parts
        .filter((p) => !byName.has(p.voice.toLowerCase()))
        .map((p) => `"${p.voice}" is not a base voice`);
      if (unknown.length) problems.voiceBlend = unknown;
      else
        voiceBlend = parsed.parts
          .map((p) => byName.get(p.voice.toLowerCase())! + (p.weight === 1 ? '' : `(${p.weight})`))
          .join('+');
    }
  }

  const language = (input.language ?? engine.defaultLanguage).trim().toLowerCase();
  if (!languages.includes(language)) problems.language = [`"${input.language}" is not a language of the speech engine`];

  if (Object.keys(problems).length) throw validationError(problems);
  return { baseVoice: baseVoice!, voiceBlend, language, speed: input.speed ?? DEFAULT_SPEED };
}
