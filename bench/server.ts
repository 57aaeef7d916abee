// The one-process server plus the benchmarks' baseline routes: the same work done without
// GraphQL, for side-by-side figures. Prints "READY <url>" when it answers.
import 'reflect-metadata';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer } from '../bin/all-in-one';
import { loadConfig } from '../lib/config';
import { onShutdownSignal } from '../lib/http-server';
import { startTracing } from '../lib/tracing';
import { mountAuthBaseline } from './baselines/auth';
import { mountNotesBaseline } from './baselines/notes';
import { mountTtsBaseline } from './baselines/tts';

const config = loadConfig();
startTracing(config.tracing, { service: 'all-in-one', trustParent: config.TRACE_TRUST_PARENT });
void startServer(config, {
  mount: (app, internals) => {
    mountAuthBaseline(app, internals);
    mountTtsBaseline(app, internals);
    mountNotesBaseline(app, internals);
    // The longest the event loop was held since the last call: what one request can make every
    // other wait, which holds on a loaded machine where latencies do not (issue 41 finding 2).
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    app.get('/bench/loop', (_req, res) => {
      const figures = { max_ms: loop.max / 1e6, p99_ms: loop.percentile(99) / 1e6, mean_ms: loop.mean / 1e6 };
      loop.reset();
      res.json(figures);
    });
  },
}).then((server) => {
  process.stdout.write(`READY ${server.url}\n`);
  onShutdownSignal(
    () => server.close(),
    () => undefined,
  );
});
