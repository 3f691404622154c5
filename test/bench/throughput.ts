import { fork, type Serializable } from 'node:child_process';
import { editionsSource } from '@hatchery/core/indexer/editions';
import { activeListings, listingsSource } from '@hatchery/core/indexer/listings';
import { nftsSource, ownedNfts } from '@hatchery/core/indexer/nfts';
import { salesSource } from '@hatchery/core/indexer/sales';
import { keyColumn } from '@hatchery/core/query/cursor';
import { buildPageStatements, pageQuerySchema, type ListSource, type ServerConditions } from '@hatchery/core/query/page-query';
import { loadAverage, type BenchContext, type BenchSection } from './context';
import { wallet } from './indexed';
import { httpGet, measureInChild, median, printTable, type Figures, type Row } from './measure';
import { countCacheLimits } from '@hatchery/core/query/count-cache';

interface Case {
  name: string;
  path: string;
  source: ListSource;
  serverConditions?: ServerConditions;
}

const cases: Case[] = [
  { name: 'nfts of a wallet (default page)', path: `/accounts/${wallet}/nfts`, source: nftsSource, serverConditions: ownedNfts(wallet) },
  { name: 'sales (default page, 1M rows)', path: '/transparency/sales', source: salesSource },
  { name: 'editions (default page)', path: '/editions', source: editionsSource },
  { name: 'listings (default page)', path: '/marketplace/listings', source: listingsSource, serverConditions: activeListings },
];

const goals = { rps: 0.85, p99: 1.3 };

/** Runs of each side per case, alternating (BENCH_THROUGHPUT_ROUNDS). */
const rounds = Number(process.env.BENCH_THROUGHPUT_ROUNDS ?? 3);

/**
 * With a number of µs (BENCH_THROUGHPUT_CALIBRATION_US), a third side: the
 * minimal server holding its thread that much longer on each request,
 * measured against the plain one like Hatchery, to show in the same run what
 * a known extra cost does to the ratios and how far they move by chance.
 */
const calibrationMicros = Number(process.env.BENCH_THROUGHPUT_CALIBRATION_US ?? 0);

/** A side's rounds as one figure: the median of their rates and percentiles, each CPU per request over all their requests. */
function pooled(runs: Figures[]): Figures {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const perRequest = (pick: (run: Figures) => number | undefined) =>
    runs.every((run) => pick(run) !== undefined) ? runs.reduce((sum, run) => sum + pick(run)! * run.requests, 0) / requests : undefined;
  return {
    requests,
    rps: median(runs.map((run) => run.rps)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    databaseMsPerRequest: perRequest((run) => run.databaseMsPerRequest),
    serverMsPerRequest: perRequest((run) => run.serverMsPerRequest),
    clientMsPerRequest: perRequest((run) => run.clientMsPerRequest),
  };
}

/** A side's ratios to the minimal server's over its pooled runs, against the goals, and each round's beside them. */
function verdict(runs: Figures[], baselineRuns: Figures[]): string {
  const side = pooled(runs);
  const baseline = pooled(baselineRuns);
  const rps = side.rps / baseline.rps;
  const p99 = side.p99Ms / baseline.p99Ms;
  const met = (yes: boolean) => (yes ? 'met' : 'NOT met');
  const byRound = (pick: (run: Figures) => number) => runs.map((run, round) => (pick(run) / pick(baselineRuns[round]!)).toFixed(2)).join(', ');
  return (
    `throughput ${rps.toFixed(2)} (goal ≥ ${goals.rps}: ${met(rps >= goals.rps)}; rounds ${byRound((run) => run.rps)}), ` +
    `p99 ${p99.toFixed(2)}× (goal ≤ ${goals.p99}: ${met(p99 <= goals.p99)}; rounds ${byRound((run) => run.p99Ms)})`
  );
}

/** A server in a process of its own: handed `setup`, ready with its first message, stopped with SIGTERM and awaited. */
export function startServer<Message>(name: string, module: string, setup: Serializable, execArgv?: string[]) {
  const child = fork(new URL(module, import.meta.url), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = new Promise<Message>((resolve, reject) => {
    child.once('message', (message) => resolve(message as Message));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}`)));
  });
  const stopped = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.send(setup);
  return { ready, pid: child.pid, stop: () => (child.kill('SIGTERM'), stopped) };
}

/** A minimal node:http + pg server answering each case's path with the statements Hatchery runs for it, holding its thread `holdMicros` longer on each. */
function startMinimalServer(databaseUrl: string, concurrency: number, holdMicros = 0) {
  const request = pageQuerySchema.parse({});
  const routes = cases.map(({ path, source, serverConditions }) => {
    const statements = buildPageStatements(source, request, serverConditions);
    return {
      path,
      page: statements.page,
      count: statements.count,
      pageSize: request.pageSize,
      keyColumns: statements.terms.map((_term, index) => keyColumn(index)),
    };
  });
  const setup = { databaseUrl, concurrency, countTtlMs: countCacheLimits.ttlMs, routes, holdMicros };
  return startServer<{ port: number }>('the minimal server', './minimal-server.mjs', setup);
}

/** The stack in a process of its own, as `npm start` runs it on the bench's database (serving-stack.ts). */
const startServingStack = (stack: BenchContext['stack']) =>
  startServer<{ url: string }>('the serving stack', './serving-stack.ts', { databaseUrl: stack.databaseUrl }, ['--import', 'tsx']);

/**
 * Each list's default page through the local gateway beside a minimal
 * node:http + pg server running the same statements, at the same
 * concurrency, in the same run: what Hatchery's own code costs a read under load.
 */
export const throughputBench: BenchSection = async ({ stack, concurrency, durationMs }) => {
  const load = loadAverage();
  const server = startMinimalServer(stack.databaseUrl, concurrency);
  const serving = startServingStack(stack);
  const calibration = calibrationMicros > 0 ? startMinimalServer(stack.databaseUrl, concurrency, calibrationMicros) : undefined;
  const rows: Row[] = [];
  const verdicts: string[] = [];
  const cpu: string[] = [];
  const postgresPid = stack.postgres?.pid;
  try {
    const [{ port }, { url: servingUrl }, calibrated] = await Promise.all([server.ready, serving.ready, calibration?.ready]);
    for (const { name, path } of cases) {
      const url = `${servingUrl}${path}`;
      const minimal = `http://127.0.0.1:${port}${path}`;
      const held = calibrated && `http://127.0.0.1:${calibrated.port}${path}`;
      const ourPage = JSON.parse(await httpGet(url)) as { items: unknown[] };
      const theirPage = JSON.parse(await httpGet(minimal)) as { items: unknown[] };
      // The minimal server answers the rows as they come; Hatchery shapes them (nested attributes), so only their number is compared.
      if (ourPage.items.length !== theirPage.items.length) throw new Error(`${name}: the minimal server answers another page than ${path}`);
      // Interleaved, so that a drift of the machine over the section weighs on both sides alike.
      const ours: Figures[] = [];
      const theirs: Figures[] = [];
      const slowed: Figures[] = [];
      for (let round = 0; round < rounds; round++) {
        ours.push(await measureInChild({ kind: 'http', url, concurrency, durationMs, postgresPid, serverPid: serving.pid }));
        theirs.push(await measureInChild({ kind: 'http', url: minimal, concurrency, durationMs, postgresPid, serverPid: server.pid }));
        if (held) slowed.push(await measureInChild({ kind: 'http', url: held, concurrency, durationMs, postgresPid, serverPid: calibration?.pid }));
      }
      const gateway = pooled(ours);
      const baseline = pooled(theirs);
      const µs = (ms: number | undefined) => (ms === undefined ? '-' : (ms * 1000).toFixed(0));
      cpu.push(
        `  ${name.padEnd(44)} server ${µs(gateway.serverMsPerRequest)} µs beside ${µs(baseline.serverMsPerRequest)}, PostgreSQL ${µs(gateway.databaseMsPerRequest)} µs beside ${µs(baseline.databaseMsPerRequest)}, load generator ${µs(gateway.clientMsPerRequest)} µs beside ${µs(baseline.clientMsPerRequest)}`,
      );
      rows.push({
        name,
        gateway,
        baseline,
        baselineName: `a minimal node:http + pg server running the same statements, concurrency ${concurrency}; each side the median of ${rounds} interleaved runs`,
      });
      verdicts.push(`  ${name.padEnd(44)} ${verdict(ours, theirs)}`);
      if (slowed.length) {
        const label = `  the minimal server held ${calibrationMicros} µs more`.padEnd(44);
        cpu.push(`  ${label} server ${µs(pooled(slowed).serverMsPerRequest)} µs`);
        verdicts.push(`  ${label} ${verdict(slowed, theirs)}`);
      }
    }
  } finally {
    await Promise.all([server.stop(), serving.stop(), calibration?.stop()]);
  }
  printTable(`Throughput beside a minimal server (load average ${load} when the section started)`, rows);
  console.log(`CPU per request over each recorded run (Hatchery beside the minimal server; /proc, to 10 ms a run):\n${cpu.join('\n')}`);
  console.log(`Goals:\n${verdicts.join('\n')}`);
};
