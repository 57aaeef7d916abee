// Whether this process records a request or a job: the one sampling rule.
import type { TraceParent } from './propagation';

/**
 * Whether this process records a request: with a parent-based sampler (parentbased_*, the
 * default) a trusted caller's sampled flag is followed; otherwise (no caller's trace, a caller
 * not trusted, or always_on / always_off / traceidratio) a draw at `ratio`. The draw is random,
 * not the trace id's as the specification's traceidratio would take it: a caller chooses its
 * trace id, so it must not choose the draw.
 */
export function sampledFor(
  ratio: number,
  parent: TraceParent | undefined,
  trusted: boolean,
  parentBased = true,
): boolean {
  if (parent && trusted && parentBased) return parent.sampled;
  return ratio >= 1 || (ratio > 0 && Math.random() < ratio);
}
