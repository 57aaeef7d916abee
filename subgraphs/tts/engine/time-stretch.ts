// Pitch-preserving time stretch of mono 16-bit PCM, with SoundTouch's WSOLA (`Stretch` from
// soundtouchjs, LGPL-2.1). eSpeak NG speaks only 80–450 words a minute; speeds beyond that are
// rendered at the nearest rate the engine has and then stretched by the remaining factor.
//
// The functions are self-contained (they use nothing from this module's scope but each other by
// name): the engine's worker threads run their source text, so that stretching, like rendering,
// stays off the event loop that serves requests. The SoundTouch class comes in as an argument for
// the same reason.

/** soundtouchjs's WSOLA stage: stereo-interleaved float frames in, the same out at `tempo`. */
export interface StretchStage {
  setParameters(sampleRate: number, sequenceMs: number, seekWindowMs: number, overlapMs: number): void;
  tempo: number;
  inputBuffer: { putSamples(samples: Float32Array, position?: number, numFrames?: number): void };
  outputBuffer: { frameCount: number; receiveSamples(output: Float32Array, numFrames: number): void };
  process(): void;
}
export type StretchClass = new (createBuffers: boolean) => StretchStage;

/** A stage of the audio pipeline fed in pieces: each push answers what can go out now; finish the rest. */
export interface PcmStage {
  push(samples: Int16Array): Int16Array;
  finish(): Int16Array;
}

/**
 * Streaming stretch: pieces in as they are rendered, stretched pieces out as SoundTouch makes
 * them (it works in blocks of a few tens of milliseconds, so output lags input by about one).
 * Altogether exactly round(total input / tempo) samples come out: never more than
 * round(input so far / tempo) before finish(), which flushes the stage with silence and cuts
 * or pads to that length.
 */
export function createTimeStretch(sampleRate: number, tempo: number, Stretch: StretchClass): PcmStage {
  if (!(tempo > 0)) throw new Error(`tempo must be above 0 (got ${tempo})`);
  const stage = new Stretch(true);
  // Sequence and seek window chosen by SoundTouch for the tempo (0 = automatic), 8 ms overlap.
  stage.setParameters(sampleRate, 0, 0, 8);
  stage.tempo = tempo;
  const BLOCK = 4096;
  const input = new Float32Array(BLOCK * 2);
  let output = new Float32Array(BLOCK * 4);
  let taken = 0; // input samples so far
  let made: Int16Array[] = []; // output not yet handed out
  let madeLength = 0;
  let given = 0; // output samples handed out

  const drain = () => {
    const frames = stage.outputBuffer.frameCount;
    if (!frames) return;
    if (output.length < frames * 2) output = new Float32Array(frames * 2);
    stage.outputBuffer.receiveSamples(output, frames);
    const piece = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      const v = Math.round(output[2 * i] * 32768);
      piece[i] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
    }
    made.push(piece);
    madeLength += frames;
  };
  const feed = (samples: Int16Array | null, frames: number) => {
    for (let i = 0; i < frames; i++) {
      const v = samples ? samples[i] / 32768 : 0;
      input[2 * i] = v;
      input[2 * i + 1] = v;
    }
    stage.inputBuffer.putSamples(input, 0, frames);
    stage.process();
    drain();
  };
  /** Up to `limit` samples in all (so far), from what was made. */
  const handOut = (limit: number): Int16Array => {
    const n = Math.max(0, Math.min(madeLength, limit - given));
    const out = new Int16Array(n);
    let at = 0;
    while (at < n) {
      const head = made[0];
      const use = Math.min(head.length, n - at);
      out.set(head.subarray(0, use), at);
      at += use;
      if (use === head.length) made.shift();
      else made[0] = head.subarray(use);
    }
    madeLength -= n;
    given += n;
    return out;
  };

  return {
    push(samples) {
      for (let at = 0; at < samples.length; at += BLOCK)
        feed(samples.subarray(at, Math.min(samples.length, at + BLOCK)), Math.min(BLOCK, samples.length - at));
      taken += samples.length;
      return handOut(Math.round(taken / tempo));
    },
    finish() {
      const target = Math.round(taken / tempo);
      // After the last sample, silence pushes what the stage still holds through it.
      const flushFrames = Math.ceil(sampleRate * 0.5) + BLOCK;
      for (let fed = 0; given + madeLength < target && fed < flushFrames; fed += BLOCK) feed(null, BLOCK);
      const rest = handOut(target);
      made = [];
      madeLength = 0;
      if (given >= target) return rest;
      const padded = new Int16Array(rest.length + target - given); // never reached in practice: SoundTouch gives back all it took
      padded.set(rest);
      given = target;
      return padded;
    },
  };
}

/**
 * `samples` played `tempo` times as fast (tempo 2: half as long), pitch unchanged; the result
 * has exactly round(length / tempo) samples. Fed in small blocks, as the engine streams it.
 */
export function timeStretch(samples: Int16Array, sampleRate: number, tempo: number, Stretch: StretchClass): Int16Array {
  if (!(tempo > 0)) throw new Error(`tempo must be above 0 (got ${tempo})`);
  if (Math.abs(tempo - 1) < 1e-6 || samples.length === 0) return samples;
  const stage = createTimeStretch(sampleRate, tempo, Stretch);
  const head = stage.push(samples);
  const tail = stage.finish();
  const out = new Int16Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}
