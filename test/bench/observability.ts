import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { httpRoutes } from '@hatchery/functions/routes';
import { fanOutHandler } from '@hatchery/functions/routes/realtime';
import { bundleHandlers, httpEvent, probe, stackBacking, tracingEnvironment, xrayDaemon, type HandlerBundle, type Probe } from '../support/bundles';
import { exportBaseline, summarize } from './baseline';
import type { BenchSection } from './context';

/**
 * What metrics, tracing and the log context cost a function: bundle size,
 * import and first call in fresh processes, and warm CPU per call, for this
 * checkout in three modes beside the same functions built from
 * BENCH_BASELINE_REF (default `main`), all in this run against the same stack.
 */
const runs = Number(process.env.BENCH_COLD_START_RUNS ?? 5);
const warmCalls = Number(process.env.BENCH_WARM_CALLS ?? 300);
const baselineRef = process.env.BENCH_BASELINE_REF ?? 'main';

/** Three HTTP functions, and the fan-out function on a shard with no connections (its read, no post). */
const targets = [
  ...[httpRoutes.listEditions, httpRoutes.getMe, httpRoutes.getSummary].map((route) => ({
    label: `${route.method} ${route.path}`,
    handler: route.handler,
    route,
  })),
  { label: 'fan-out, empty shard', handler: fanOutHandler, route: undefined },
];

export const observabilityBench: BenchSection = async ({ stack }) => {
  const workdir = mkdtempSync(join(tmpdir(), 'hatchery-observability-'));
  const daemon = await xrayDaemon();
  try {
    const baselineDir = join(workdir, 'baseline');
    const commit = exportBaseline(baselineDir, baselineRef);
    const head = await bundleHandlers(
      targets.map((target) => target.handler),
      join(workdir, 'head'),
    );
    const inBaseline = targets.filter((target) => existsSync(join(baselineDir, `${target.handler.slice(0, target.handler.lastIndexOf('.'))}.ts`)));
    const baseline = await bundleHandlers(
      inBaseline.map((target) => target.handler),
      join(workdir, 'base'),
      baselineDir,
    );
    const token = await stack.idp.signToken({ uid: 'bench-observability', email: 'bench-observability@example.com', name: 'Bench' });
    const backing = {
      ...stackBacking(stack),
      // One request line per call, as deployed.
      LOG_LEVEL: 'info',
      WEBSOCKET_MANAGEMENT_ENDPOINT: stack.url,
    };
    const lambda = tracingEnvironment(daemon.port);
    const modes: { name: string; env: Record<string, string>; bundles: HandlerBundle[] }[] = [
      { name: `baseline ${commit}`, env: { ...backing, ...lambda }, bundles: baseline },
      { name: 'metrics, tracing off', env: { ...backing, ...lambda, POWERTOOLS_TRACE_ENABLED: 'false' }, bundles: head },
      { name: 'metrics and tracing on', env: { ...backing, ...lambda }, bundles: head },
      {
        name: 'metrics off, tracing off',
        env: { ...backing, ...lambda, POWERTOOLS_TRACE_ENABLED: 'false', POWERTOOLS_METRICS_DISABLED: 'true' },
        bundles: head,
      },
    ];
    console.log(
      `\nObservability cost per function (median of ${runs} fresh Node.js ${process.versions.node} processes; warm CPU over ${warmCalls} calls; Lambda's environment, X-Ray daemon stand-in)`,
    );
    console.log(
      `${'function'.padEnd(28)} ${'mode'.padEnd(28)} ${'KB'.padStart(6)} ${'gzip KB'.padStart(8)} ${'import ms'.padStart(10)} ${'1st call'.padStart(9)} ${'warm CPU µs'.padStart(12)} ${'status'.padStart(7)}`,
    );
    for (const { label, handler, route } of targets) {
      const event = route
        ? httpEvent(route, route.auth === 'jwt' ? { token } : {})
        : { event: 'observability', shard: 0, frame: marketChangedMessage({ count: 1, maxBlock: '1', version: 1 }) };
      const present = modes.flatMap((mode) => {
        const bundle = mode.bundles.find((each) => each.handler === handler);
        return bundle ? [{ ...mode, bundle, probes: [] as Probe[] }] : [];
      });
      // Round-robin, so that a machine that gets busier during the run weighs on every mode alike.
      for (let i = 0; i < runs; i++) for (const mode of present) mode.probes.push((await probe(mode.bundle, event, mode.env, { warmCalls })).probe);
      let reference: Probe | undefined;
      for (const { bundle, probes, ...mode } of present) {
        const result = summarize(probes);
        reference ??= result;
        const ratio = reference.warmCpuUs && result.warmCpuUs ? ` (${(result.warmCpuUs / reference.warmCpuUs).toFixed(2)}×)` : '';
        console.log(
          `${label.padEnd(28)} ${mode.name.padEnd(28)} ${(bundle.bytes / 1024).toFixed(0).padStart(6)} ${(bundle.gzipBytes / 1024).toFixed(0).padStart(8)} ` +
            `${result.importMs?.toFixed(0).padStart(10) ?? '-'.padStart(10)} ${result.firstCallMs?.toFixed(0).padStart(9) ?? '-'.padStart(9)} ${`${result.warmCpuUs?.toFixed(0) ?? '-'}${ratio}`.padStart(12)} ${String(result.error ? result.error.split('\n')[0] : (result.statusCode ?? 'ok')).padStart(7)}`,
        );
      }
    }
    console.log(`(×: warm CPU relative to the first row of the function; tracing's segments went to a local UDP socket: ${daemon.documents.length} received)`);
  } finally {
    await daemon.close();
    rmSync(workdir, { recursive: true, force: true });
  }
};
