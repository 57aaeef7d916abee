// The audio's blob store is the shared one (lib/blob-store.ts); these are its TTS names.
export type { BlobStore as AudioStore, BlobWriter as AudioWriter } from '../../../lib/blob-store';
export { DiskBlobStore as DiskAudioStore } from '../../../lib/blob-store';
