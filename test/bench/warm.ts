import { spawn, type SpawnOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { httpRoutes, type HttpRoute } from '@hatchery/functions/routes';
import { readRouteNames, verdict, warmGoals } from '../support/budgets';
import { functionBuild, insideNodeModules } from '../deploy/pg-only';
import { buildHandler } from '../deploy/sst/build-handler';
import { httpEvent, repositoryRoot, stackBacking, tracingEnvironment, xrayDaemon } from '../support/bundles';
import { loadAverage, type BenchSection } from './context';
import { printTopFrames, type CpuProfile } from './cpu-profile';
import { wallet } from './indexed';
import { median } from './measure';

/** Runs a probe process to its end; within ten minutes, or it is killed and the bench fails. */
function runProbe(command: string, args: string[], options: SpawnOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, timeout: 600_000 });
    child.once('error', reject);
    child.once('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`the probe exited with ${signal ?? code}`))));
  });
}

/**
 * Each read handler's CPU per warm invocation as deployed (info logs, metrics,
 * tracing on in Lambda's environment, segments sent to an X-Ray daemon
 * stand-in) beside the same SQL through pg in the same process: each handler's
 * bundle is built as the deploy builds it but with pg left external, so that
 * the process can record each statement the handler sends through pg's Client
 * and send the same statements through a pool of the same pg. The probes run
 * in processes of their own, apart from the stack.
 */
const calls = Number(process.env.BENCH_WARM_CALLS ?? 1000);
const runs = Number(process.env.BENCH_WARM_RUNS ?? 5);
/** Calls before the timed ones, their statements replayed too: by then V8 has compiled the hot path, as in an instance that has served a few seconds of traffic (the first few hundred calls run slower code on both sides), and the pools hold their connections. */
const warmup = Number(process.env.BENCH_WARM_WARMUP ?? 2000);
const blocks = 10;
const profileRoute = process.env.BENCH_PROFILE_ROUTE ?? `${httpRoutes.listEditions.method} ${httpRoutes.listEditions.path}`;
const profileCalls = Number(process.env.BENCH_PROFILE_CALLS ?? 3000);
/** X-Ray's default sampling rule (the first request each second, then 5%) as a busy function sees it; BENCH_TRACE_SAMPLED_EVERY=1 traces every call. */
const sampledEvery = Number(process.env.BENCH_TRACE_SAMPLED_EVERY ?? 20);
/** Finer than --cpu-prof's default 1 ms: a warm call takes a fraction of a millisecond. */
const profileIntervalUs = 100;

interface Report {
  importMs?: number;
  items?: number;
  handlerUs?: number;
  baselineUs?: number;
  statementsPerCall?: number;
  error?: string;
}

/** One probe process's figures, and what the handler printed and traced per call. */
interface Sample {
  report: Report;
  emfPerCall: number;
  logLinesPerCall: number;
  segmentsPerCall: number;
}

interface Target {
  /** The route's name in the route table, which names the function too. */
  name: string;
  key: string;
  route: HttpRoute;
  file: string;
  exportName: string;
  taskRoot: string;
  pg: string;
}

/** Each read handler's bundle: the deploy's build (test/deploy/sst/build-handler.ts, SST's) with pg external, and a source map. */
async function buildTargets(dir: string): Promise<Target[]> {
  const targets: Target[] = [];
  for (const name of readRouteNames) {
    const route = httpRoutes[name];
    const built = await buildHandler(repositoryRoot, dir, {
      functionID: name,
      handler: route.handler,
      runtime: 'nodejs24.x',
      // The map is a file of its own; the code is the deploy's but for pg's import and the line naming the map.
      properties: { ...functionBuild, sourcemap: true, esbuild: { external: ['pg'] } },
    });
    if (built.errors.length) throw new Error(`${name}: ${built.errors.join('; ')}`);
    const file = join(built.out, built.handler.replace(/\.[^.]+$/, '.mjs'));
    const handler = built.handler;
    // The pg the bundle imports, as Node resolves it from there; the probe patches and uses that one.
    const pg = createRequire(file).resolve('pg');
    targets.push({ name, key: `${route.method} ${route.path}`, route, file, exportName: handler.slice(handler.lastIndexOf('.') + 1), taskRoot: built.out, pg });
  }
  return targets;
}

export const warmBench: BenchSection = async ({ stack }) => {
  const loadAtStart = loadAverage();
  const dir = insideNodeModules(`warm-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const daemon = await xrayDaemon();
  try {
    const targets = await buildTargets(dir);
    const environment = (target: Target) => ({
      PATH: process.env.PATH ?? '',
      ...stackBacking(stack),
      // As deployed: one request line per call at info; metrics are on unless disabled; tracing in Lambda's environment.
      LOG_LEVEL: 'info',
      ...tracingEnvironment(daemon.port, target.name),
      LAMBDA_TASK_ROOT: target.taskRoot,
    });
    const probe = async (target: Target, profile?: { file: string; calls: number; intervalUs: number }): Promise<Sample> => {
      const segmentsBefore = daemon.documents.length;
      const event = httpEvent(target.route, target.route.path.includes('{address}') ? { parameters: { address: wallet } } : {});
      const input = {
        file: target.file,
        exportName: target.exportName,
        event,
        pg: target.pg,
        databaseUrl: stack.databaseUrl,
        calls,
        warmup,
        blocks,
        sampledEvery,
        profile,
      };
      // The probe's output goes to a file: a pipe whose reader (this process) is late fills up, and the handler's
      // synchronous writes would then wait on the bench rather than cost what a write costs.
      const output = join(dir, `probe-${target.name}-${Date.now()}.out`);
      const fd = openSync(output, 'w');
      try {
        await runProbe(process.execPath, [new URL('./warm-probe.mjs', import.meta.url).pathname], {
          env: { ...environment(target), WARM_PROBE_INPUT: JSON.stringify(input) },
          cwd: target.taskRoot,
          stdio: ['ignore', fd, 'inherit'],
        });
      } finally {
        closeSync(fd);
      }
      const stdout = readFileSync(output, 'utf8');
      rmSync(output);
      const marker = stdout.lastIndexOf('\nWARM ');
      const report = JSON.parse(stdout.slice(marker + '\nWARM '.length)) as Report;
      const lines = stdout
        .slice(0, marker)
        .split('\n')
        .filter((line) => line.startsWith('{'));
      const emf = lines.filter((line) => line.includes('"_aws":')).length;
      const invocations = 1 + warmup + (profile ? profile.calls : calls);
      return {
        report,
        emfPerCall: emf / invocations,
        logLinesPerCall: (lines.length - emf) / invocations,
        segmentsPerCall: (daemon.documents.length - segmentsBefore) / invocations,
      };
    };

    const samples = targets.map(() => [] as Sample[]);
    // Rounds of every handler once, so that a machine that gets busier during the run weighs on every handler alike.
    for (let round = 0; round < runs; round++) for (const [index, target] of targets.entries()) samples[index]!.push(await probe(target));
    printWarm(targets, samples, loadAtStart);

    if (process.env.BENCH_PROFILE === '1') {
      const target = targets.find((each) => each.key === profileRoute);
      if (!target) throw new Error(`BENCH_PROFILE_ROUTE '${profileRoute}' is none of ${targets.map((each) => each.key).join(', ')}`);
      const file = join(
        tmpdir(),
        `hatchery-warm-${target.route.handler
          .split('/')
          .at(-1)!
          .replace(/\.handler$/, '')}-${Date.now()}.cpuprofile`,
      );
      const load = loadAverage();
      const { report } = await probe(target, { file, calls: profileCalls, intervalUs: profileIntervalUs });
      if (report.error) throw new Error(`profiling ${target.key}: ${report.error}`);
      console.log(
        `\nCPU profile of ${target.key}'s warm loop (${profileCalls} calls after the warm-up, sampled every ${profileIntervalUs} µs; load average ${load} when it started): ${file}`,
      );
      printTopFrames(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, repositoryRoot);
    }
  } finally {
    await daemon.close();
    rmSync(dir, { recursive: true, force: true });
  }
};

const cell = (value: number | undefined, digits: number, width: number) =>
  (value === undefined || !Number.isFinite(value) ? '-' : value.toFixed(digits)).padStart(width);

/** The table: per handler the medians over its processes (each column on its own), then the goals of test/budgets.json. */
function printWarm(targets: readonly Target[], samples: readonly Sample[][], loadAtStart: string): void {
  console.log(
    `\nWarm invocations as deployed (LOG_LEVEL=info, metrics on, tracing on in Lambda's environment to an X-Ray daemon stand-in, ${sampledEvery === 1 ? 'every call sampled' : `1 call in ${sampledEvery} sampled as X-Ray's default rule samples a busy function`}), ` +
      `${calls} calls after ${warmup}, median of ${runs} fresh Node.js ${process.versions.node} processes per handler, in rounds; load average ${loadAtStart} when it started`,
  );
  console.log(
    `${'handler'.padEnd(36)} ${'handler µs'.padStart(10)} ${'pg µs'.padStart(8)} ${'overhead ms'.padStart(11)} ${'ratio'.padStart(6)} ${'SQL/call'.padStart(8)} ` +
      `${'EMF/call'.padStart(8)} ${'logs/call'.padStart(9)} ${'segs/call'.padStart(9)} ${'items'.padStart(5)}`,
  );
  const rows = targets.map((target, index) => {
    const reports = samples[index]!.map((sample) => sample.report);
    const failed = reports.find((report) => report.error);
    if (failed) {
      console.log(`${target.key.padEnd(36)} ${failed.error!.split('\n')[0]}`);
      return undefined;
    }
    const statements = median(reports.map((report) => report.statementsPerCall!));
    const row = {
      key: target.key,
      handlerUs: median(reports.map((report) => report.handlerUs!)),
      baselineUs: median(reports.map((report) => report.baselineUs!)),
      overheadMs: median(reports.map((report) => (report.handlerUs! - report.baselineUs!) / 1000)),
      // Without SQL in a warm call (an answer from the instance's cache) there is nothing to divide by.
      ratio: statements > 0 ? median(reports.map((report) => report.handlerUs! / report.baselineUs!)) : undefined,
    };
    const per = (pick: (sample: Sample) => number) => median(samples[index]!.map(pick));
    console.log(
      `${target.key.padEnd(36)} ${cell(row.handlerUs, 0, 10)} ${cell(row.baselineUs, 0, 8)} ${cell(row.overheadMs, 3, 11)} ${cell(row.ratio, 2, 6)} ${cell(statements, 2, 8)} ` +
        `${cell(
          per((sample) => sample.emfPerCall),
          2,
          8,
        )} ${cell(
          per((sample) => sample.logLinesPerCall),
          2,
          9,
        )} ${cell(
          per((sample) => sample.segmentsPerCall),
          2,
          9,
        )} ${cell(reports[0]!.items, 0, 5)}`,
    );
    return row;
  });
  console.log(
    '(handler µs: CPU per call; pg µs: the statements each call sent, through a pg pool in the same process, rows serialized to JSON; ' +
      "overhead = handler − pg, ratio = handler / pg, each the median of the processes' own; EMF, log lines and X-Ray segments per call show the configuration; items: the first page's)",
  );
  const measured = rows.filter((row) => row !== undefined);
  if (!measured.length) return;
  const overheads = measured.map((row) => row.overheadMs);
  const ratios = measured.flatMap((row) => (row.ratio === undefined ? [] : [row.ratio]));
  console.log('Goals (test/budgets.json):');
  console.log(
    `  ${`warm overhead per invocation ≤ ${warmGoals.overheadMs} ms`.padEnd(44)} ${verdict(Math.max(...overheads) <= warmGoals.overheadMs)}: ` +
      `${overheads.filter((each) => each > warmGoals.overheadMs).length} of ${overheads.length} over; ${Math.min(...overheads).toFixed(3)}–${Math.max(...overheads).toFixed(3)} ms`,
  );
  if (ratios.length) {
    console.log(
      `  ${`handler / same SQL through pg ≤ ${warmGoals.overPg}×`.padEnd(44)} ${verdict(Math.max(...ratios) <= warmGoals.overPg)}: ` +
        `${ratios.filter((each) => each > warmGoals.overPg).length} of ${ratios.length} over; ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}×` +
        (ratios.length < measured.length ? ` (${measured.length - ratios.length} sent no SQL when warm)` : ''),
    );
  }
}
