// Pitch-preserving time stretch of mono 16-bit PCM, with SoundTouch's WSOLA (`Stretch` from
// soundtouchjs, LGPL-2.1). eSpeak NG speaks only 80–450 words a minute; speeds beyond that are
// rendered at the nearest rate the engine has and then stretched by the remaining factor.
//
// The function is self-contained (it uses nothing from this module's scope): the engine's
// worker threads run its source text, so that stretching, like rendering, stays off the event
// loop that serves requests. The SoundTouch class comes in as an argument for the same reason.

/** soundtouchjs's WSOLA stage: stereo-interleaved float frames in, the same out at `tempo`. */
export interface StretchStage {
  setParameters(sampleRate: number, sequenceMs: number, seekWindowMs: number, overlapMs: number): void;
  tempo: number;
  inputBuffer: { putSamples(samples: Float32Array, position?: number, numFrames?: number): void };
  outputBuffer: { frameCount: number; receiveSamples(output: Float32Array, numFrames: number): void };
  process(): void;
}
export type StretchClass = new (createBuffers: boolean) => StretchStage;

/**
 * `samples` played `tempo` times as fast (tempo 2: half as long), pitch unchanged; the result
 * has exactly round(length / tempo) samples. Fed in small blocks so that memory stays bounded
 * by the output, whatever the length.
 */
export function timeStretch(samples: Int16Array, sampleRate: number, tempo: number, Stretch: StretchClass): Int16Array {
  if (!(tempo > 0)) throw new Error(`tempo must be above 0 (got ${tempo})`);
  if (Math.abs(tempo - 1) < 1e-6 || samples.length === 0) return samples;
  const stage = new Stretch(true);
  // Sequence and seek window chosen by SoundTouch for the tempo (0 = automatic), 8 ms overlap.
  stage.setParameters(sampleRate, 0, 0, 8);
  stage.tempo = tempo;

  const target = Math.round(samples.length / tempo);
  const out = new Int16Array(target);
  let written = 0;
  const BLOCK = 4096;
  const input = new Float32Array(BLOCK * 2);
  let output = new Float32Array(BLOCK * 4);
  const drain = () => {
    const frames = stage.outputBuffer.frameCount;
    if (!frames) return;
    if (output.length < frames * 2) output = new Float32Array(frames * 2);
    stage.outputBuffer.receiveSamples(output, frames);
    for (let i = 0; i < frames && written < target; i++) {
      const v = Math.round(output[2 * i] * 32768);
      out[written++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
  };
  // After the last sample, silence pushes what the stage still holds through it.
  const flushFrames = Math.ceil(sampleRate * 0.5) + BLOCK;
  for (let at = 0; written < target && at < samples.length + flushFrames; at += BLOCK) {
    for (let i = 0; i < BLOCK; i++) {
      const v = at + i < samples.length ? samples[at + i] / 32768 : 0;
      input[2 * i] = v;
      input[2 * i + 1] = v;
    }
    stage.inputBuffer.putSamples(input, 0, BLOCK);
    stage.process();
    drain();
  }
  return out;
}
