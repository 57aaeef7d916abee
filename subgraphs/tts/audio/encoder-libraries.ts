// Where the encoders' packages are, for threads that load them by path (their code is built
// from source text, outside this process's module loader).
import { pathToFileURL } from 'node:url';

export interface EncoderModulePaths {
  /** wasm-media-encoders (LAME in WebAssembly), an ES module, as a file URL for import(). */
  lame: string;
  /** opusscript and libflacjs (its WebAssembly build), as paths for require(). */
  opus: string;
  flac: string;
}

export function encoderModulePaths(): EncoderModulePaths {
  return {
    lame: pathToFileURL(require.resolve('wasm-media-encoders').replace(/index\.cjs$/, 'es/index.mjs')).href,
    opus: require.resolve('opusscript'),
    flac: require.resolve('libflacjs/dist/libflac.wasm.js'),
  };
}

/**
 * Loads the encoders' libraries in a thread whose code is built from source text (so it is
 * self-contained, and given what it needs): LAME (wasm-media-encoders) by a native import(), opusscript and libflacjs
 * by require(). libflacjs would fetch() its WebAssembly by path where fetch exists; without it,
 * it reads the file.
 */
export async function loadEncoderLibraries<R>(paths: EncoderModulePaths, createResampler: R) {
  const importModule = new Function('url', 'return import(url)') as (url: string) => Promise<any>;
  const { createMp3Encoder } = await importModule(paths.lame);
  const OpusScript = require(paths.opus);
  const fetch = (globalThis as any).fetch;
  (globalThis as any).fetch = undefined;
  let Flac;
  try {
    Flac = require(paths.flac);
  } finally {
    (globalThis as any).fetch = fetch;
  }
  if (!Flac.isReady()) await new Promise((resolve) => Flac.on('ready', resolve));
  return { createMp3Encoder, OpusScript, Flac, createResampler };
}
