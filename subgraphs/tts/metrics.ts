// The tts module's metrics, on the process's registry (lib/metrics.ts); listed in the
// module's definition (index.ts `metrics`) and served with the rest at GET /metrics.
import client from 'prom-client';
import { registry, scrapedGauge } from '../../lib/metrics';

export const synthesisRenderSeconds = new client.Histogram({
  name: 'synthesis_render_seconds',
  help: 'Time the speech engine took to render one synthesis, by outcome.',
  labelNames: ['outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  registers: [registry],
});

/** Syntheses by state, as the tts database holds them. */
export const addSynthesisJobsSource = scrapedGauge('synthesis_jobs', 'Syntheses by state.', ['state']);

/** Age of the oldest queued synthesis (0 when none is queued). */
export const addSynthesisQueueAgeSource = scrapedGauge(
  'synthesis_queue_oldest_age_seconds',
  'Age of the oldest queued synthesis.',
  [],
);
