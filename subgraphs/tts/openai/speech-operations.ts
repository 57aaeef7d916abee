// The GraphQL operations the speech endpoint sends through the gateway, each answering `result`
// (declared with its route, so that the tests check them against the composed schema).
export const SPEECH_OPERATIONS = {
  /** Queues an ordinary synthesis, encoded while it renders when `format` is MP3, OPUS or FLAC. */
  queue:
    'mutation Speech($text: String!, $voice: String!, $speed: Float, $format: SpeechFormat) { result: synthesizeSpeech(text: $text, voice: $voice, speed: $speed, format: $format) { id } }',
  /** Stops the render of an answer no one reads any more; a finished synthesis is kept. */
  cancel: 'mutation StopSpeech($id: ID!) { result: cancelSynthesis(id: $id, keepFinished: true) { outcome } }',
  /** What the `sse` answer's done event counts. */
  done: 'query SpeechDone($id: ID!) { result: synthesis(id: $id) { characters durationMs } }',
  /** Where a synthesis is, for the answer sent whole (`stream: false`). */
  state: 'query SpeechState($id: ID!) { result: synthesis(id: $id) { state error } }',
  /** The stored file's size in a format (null while it is not encoded). */
  file: 'query SpeechFile($id: ID!, $format: SpeechFormat!) { result: synthesisAudio(id: $id, format: $format) { bytes } }',
  /** A piece of the stored file. */
  chunk:
    'query SpeechChunk($id: ID!, $format: SpeechFormat!, $offset: Int!, $length: Int!) { result: synthesisAudio(id: $id, format: $format) { chunk(offset: $offset, length: $length) } }',
  /** A piece of the file its worker is writing, with the synthesis's state. */
  stream:
    'query SpeechStream($id: ID!, $offset: Int!, $length: Int!, $format: SpeechFormat) { result: synthesisStream(id: $id, offset: $offset, length: $length, format: $format) { state error chunk end } }',
} as const;
