// Trace and span ids: random lower-case hex, never all zeros (W3C trace context).
import crypto from 'node:crypto';

export const ZERO_TRACE = '0'.repeat(32);
export const ZERO_SPAN = '0'.repeat(16);

/**
 * Random lower-case hex, from a pool of random bytes refilled 4 KiB at a time: ids must be unique
 * and unguessable enough not to collide, and are made for every traced request.
 */
const randomPool = Buffer.allocUnsafe(4096);
let poolAt = randomPool.length;
function randomHex(bytes: number): string {
  if (poolAt + bytes > randomPool.length) {
    crypto.randomFillSync(randomPool);
    poolAt = 0;
  }
  const hex = randomPool.toString('hex', poolAt, poolAt + bytes);
  poolAt += bytes;
  return hex;
}

export const newTraceId = (): string => {
  const id = randomHex(16);
  return id === ZERO_TRACE ? newTraceId() : id;
};

export const newSpanId = (): string => {
  const id = randomHex(8);
  return id === ZERO_SPAN ? newSpanId() : id;
};
