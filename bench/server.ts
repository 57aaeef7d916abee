// The one-process server plus the benchmarks' baseline routes: the same work done without
// GraphQL, for side-by-side figures. Prints "READY <url>" when it answers.
import 'reflect-metadata';
import { startServer } from '../bin/all-in-one';
import { loadConfig } from '../lib/config';
import { onShutdownSignal } from '../lib/http-server';
import { startTracing } from '../lib/tracing';
import { mountAuthBaseline } from './baselines/auth';
import { mountNotesBaseline } from './baselines/notes';
import { mountTtsBaseline } from './baselines/tts';

const config = loadConfig();
startTracing(config, 'all-in-one');
void startServer(config, {
  mount: (app, internals) => {
    mountAuthBaseline(app, internals);
    mountTtsBaseline(app, internals);
    mountNotesBaseline(app, internals);
  },
}).then((server) => {
  process.stdout.write(`READY ${server.url}\n`);
  onShutdownSignal(
    () => server.close(),
    () => undefined,
  );
});
