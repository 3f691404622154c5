import autocannon from 'autocannon';
import pg from 'pg';
import { postgresCpuMs, processCpuMs } from './database-cpu';
import { measure, percentile, withDatabaseCpu, type Figures, type LoadJob } from './measure';

/**
 * The load generator, run as its own process (see measureInChild): it gets
 * one job over IPC, drives it, and sends the figures back. Its CPU is not
 * the measured process's, but it shares the machine's cores, so HTTP load
 * comes from autocannon, which spends about half the CPU per request of
 * Node's http client (measured here: 107–154 µs against 217–285 µs).
 */
// Long enough for the gateway's JIT and the database's caches to settle on the case's own path.
const warmupMs = Number(process.env.BENCH_WARMUP_MS ?? 3000);

async function loadHttp(job: Extract<LoadJob, { kind: 'http' }>, databaseCpuMs?: () => number | undefined): Promise<Figures> {
  const { serverPid } = job;
  const run = (durationMs: number, latencies?: number[]) =>
    new Promise<autocannon.Result>((resolve, reject) => {
      const options = { url: job.url, connections: job.concurrency, duration: durationMs / 1000, headers: job.headers };
      const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
      // Each answer's own time, as wrk reports it: autocannon's histogram keeps whole milliseconds, too coarse for a p99 of a few.
      if (latencies) instance.on('response', (_client, status, _bytes, ms) => status < 300 && latencies.push(ms));
    });
  await run(warmupMs);
  return withDatabaseCpu(
    databaseCpuMs,
    async () => {
      const latencies: number[] = [];
      const result = await run(job.durationMs, latencies);
      const answered = result['2xx'];
      latencies.sort((a, b) => a - b);
      return {
        requests: answered,
        rps: answered / result.duration,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        errors: result.non2xx + result.errors + result.timeouts,
      };
    },
    serverPid === undefined ? undefined : () => processCpuMs(serverPid),
  );
}

async function run(job: LoadJob): Promise<Figures> {
  const { postgresPid } = job;
  const databaseCpuMs = postgresPid === undefined ? undefined : () => postgresCpuMs(postgresPid);
  if (job.kind === 'http') return loadHttp(job, databaseCpuMs);
  const options = { concurrency: job.concurrency, durationMs: job.durationMs, warmupMs, databaseCpuMs };
  const pool = new pg.Pool({ connectionString: job.databaseUrl, max: job.concurrency });
  pool.on('error', () => undefined);
  try {
    return await measure(() => pool.query(job.statement.text, job.statement.values), options);
  } finally {
    await pool.end();
  }
}

process.once('message', (job: LoadJob) => {
  run(job).then(
    (figures) => process.send!({ figures }, () => process.exit(0)),
    (error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)),
  );
});
