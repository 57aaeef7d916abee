// After each test file: the process-wide watchers its copy of the modules started, stopped.
// jest loads every module anew per file, but Node's perf_hooks is one per process: prom-client's
// default metrics (lib/metrics.ts) start a GC PerformanceObserver and an event-loop-delay
// histogram per copy, and Node keeps both, with everything the file loaded, until the worker
// exits. A worker that runs 80 files would hold 80 of each (80 timers waking it 10 times a
// second, 80 module graphs it cannot collect).
import perfHooks from 'node:perf_hooks';

const observers: perfHooks.PerformanceObserver[] = [];
const histograms: perfHooks.IntervalHistogram[] = [];
// eslint-disable-next-line @typescript-eslint/unbound-method -- put back on the prototype, called with its `this`
const { observe } = perfHooks.PerformanceObserver.prototype;
const { monitorEventLoopDelay } = perfHooks;

perfHooks.PerformanceObserver.prototype.observe = function (this: perfHooks.PerformanceObserver, ...args) {
  observers.push(this);
  return observe.apply(this, args);
};
perfHooks.monitorEventLoopDelay = (...args) => {
  const histogram = monitorEventLoopDelay(...args);
  histograms.push(histogram);
  return histogram;
};

afterAll(() => {
  for (const observer of observers.splice(0)) observer.disconnect();
  for (const histogram of histograms.splice(0)) histogram.disable();
  perfHooks.PerformanceObserver.prototype.observe = observe;
  perfHooks.monitorEventLoopDelay = monitorEventLoopDelay;
});
