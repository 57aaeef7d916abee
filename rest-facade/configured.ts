// Limits that the OpenAPI document states, written into its texts where they are read
// (`At most ${configured('SYNTHESIS_QUEUE_PER_USER')} of your syntheses`) and filled in from the
// live configuration when the document is built (openapi.ts), so the document says what this
// server enforces. The setting's name is type-checked against Config.
import type { Config } from '../lib/config';

type NumericSetting = { [K in keyof Config]: Config[K] extends number ? K : never }[keyof Config];

/** How a value is written: `count` 10,000; `seconds` 30 s; `duration` 7 days; `bytes` 256 KiB; `number` as a JSON number (examples). */
export type Format = 'count' | 'seconds' | 'duration' | 'bytes' | 'number';

const MARK = /\{\{config:(\w+)\|(\w+)\}\}/g;
const WHOLE = /^\{\{config:(\w+)\|number\}\}$/;

/** A placeholder for a setting's value in a document text. */
export const configured = (setting: NumericSetting, format: Format = 'count'): string =>
  `{{config:${setting}|${format}}}`;

const plural = (n: number, unit: string) => `${n.toLocaleString('en-US')} ${unit}${n === 1 ? '' : 's'}`;

function duration(seconds: number): string {
  for (const [size, unit] of [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
  ] as const) {
    if (seconds >= size && seconds % size === 0) return plural(seconds / size, unit);
  }
  return plural(seconds, 'second');
}

function bytes(n: number): string {
  for (const [size, unit] of [
    [1 << 30, 'GiB'],
    [1 << 20, 'MiB'],
    [1 << 10, 'KiB'],
  ] as const) {
    if (n >= size && n % size === 0) return `${(n / size).toLocaleString('en-US')} ${unit}`;
  }
  return plural(n, 'byte');
}

function write(value: number, format: string): string {
  switch (format) {
    case 'seconds':
      return `${value.toLocaleString('en-US')} s`;
    case 'duration':
      return duration(value);
    case 'bytes':
      return bytes(value);
    case 'number':
      return String(value);
    default:
      return value.toLocaleString('en-US');
  }
}

function valueOf(config: Config, setting: string): number {
  const value = (config as unknown as Record<string, unknown>)[setting];
  if (typeof value !== 'number')
    throw new Error(`The OpenAPI document names ${setting}, which is not a numeric setting.`);
  return value;
}

/** A text with its placeholders filled in; a text that is only a `number` placeholder becomes that number. */
export function fillConfigured(text: string, config: Config): string | number {
  const whole = WHOLE.exec(text);
  if (whole) return valueOf(config, whole[1]);
  return text.replace(MARK, (_, setting: string, format: string) => write(valueOf(config, setting), format));
}
