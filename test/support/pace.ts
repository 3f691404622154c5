import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The machine's pace, measured in the run that needs it: no test's verdict depends on how fast the machine is.
 *
 * - A rule with its own bound ("a call ends within its deadline") is checked against that bound plus `slackMs`, which
 *   grows with the scheduling lag and the round trips measured while the test runs, never against a fixed margin.
 * - A speed ("delivered 64 ms after it was written") is printed with the load (`report`), and judged, if at all, as a
 *   ratio against a baseline measured in the same run.
 * - A wait for an event waits for the event itself; its timeout only ends a hung test.
 */

/** The one-minute load average, to print beside a figure. */
export const load = (): string => loadavg()[0]!.toFixed(2);

/** Prints a figure a test measured, with the machine's load: a figure is reported, not judged. */
export function report(figure: string): void {
  console.log(`${figure} (load ${load()})`);
}

/** This process's event loop, watched until `stop()`: the longest a due timer waited to run meanwhile, in ms. */
export function watchLag(): { stop(): number } {
  // Sampled every 10 ms: an idle loop reads about 10, a process the machine kept off its core for 300 ms about 310.
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return {
    stop() {
      histogram.disable();
      return histogram.max / 1e6;
    },
  };
}

/** `work`'s outcome, how long it took, and the event loop's longest lag while it ran (watchLag). */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number; lagMs: number }> {
  const lag = watchLag();
  const started = performance.now();
  let lagMs = 0;
  const value = await work().finally(() => (lagMs = lag.stop()));
  return { value, ms: performance.now() - started, lagMs };
}

/** The slowest of `samples` runs of `operation`, one after another: a trivial round trip as this machine takes it now. */
export async function slowestOf(operation: () => Promise<unknown>, samples = 5): Promise<number> {
  let slowest = 0;
  for (let i = 0; i < samples; i++) {
    const started = performance.now();
    await operation();
    slowest = Math.max(slowest, performance.now() - started);
  }
  return slowest;
}

/**
 * What a bound allows beyond a rule's own figure: twice the lag the work met (each of its timers may fire that late,
 * and its answer wait as long again) and ten round trips of the baseline (the work's own steps, as slow as the machine
 * is now). A quiet machine keeps the bound within tens of milliseconds of the rule; a loaded one stretches it as it
 * stretches the work.
 */
export const slackMs = ({ lagMs = 0, roundTripMs = 0 }: { lagMs?: number; roundTripMs?: number }): number => 2 * lagMs + 10 * roundTripMs;

/**
 * Whether `promise` settles before the event loop turns (a setImmediate): it waited on no timer and no I/O, however
 * slow the machine. "At once" is checked so, never as "within 50 ms".
 */
export function settlesAtOnce(promise: Promise<unknown>): Promise<boolean> {
  const settled = promise.then(
    () => true,
    () => true,
  );
  return Promise.race([settled, new Promise<boolean>((resolve) => setImmediate(() => resolve(false)))]);
}

/**
 * Waits, when needed, for the next minute on the clock, so that `requests` requests end in the minute they start
 * in: the rate limits count in fixed one-minute windows. Room for them is 3 s, or ten of `roundTripMs` (one such request
 * measured now) each on a machine so loaded that they take longer.
 */
export async function roomInTheMinute(requests: number, roundTripMs: number): Promise<void> {
  const minute = 60_000;
  const left = minute - (Date.now() % minute);
  if (left < Math.max(3_000, 10 * requests * roundTripMs)) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
