import { fork } from 'node:child_process';
import http from 'node:http';

export interface Figures {
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** PostgreSQL's CPU per request while the run was recorded, when the job named its postmaster. */
  databaseMsPerRequest?: number;
  /** The serving process's CPU per request while the run was recorded, when the job named it. */
  serverMsPerRequest?: number;
  /** The load generator's own CPU per request while the run was recorded: it shares the machine's cores with what it measures. */
  clientMsPerRequest?: number;
}

/** The middle value (the upper of the two middle ones for an even count). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The value below which `p`% of `sorted` (ascending) falls. */
export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Runs `operation` from `concurrency` loops for `durationMs` after a warm-up, and reports throughput and latency. */
export async function measure(
  operation: () => Promise<unknown>,
  options: { concurrency: number; durationMs: number; warmupMs?: number; databaseCpuMs?: () => number | undefined },
): Promise<Figures> {
  const run = async (durationMs: number, record: boolean): Promise<Figures> => {
    const latencies: number[] = [];
    let errors = 0;
    const deadline = performance.now() + durationMs;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          try {
            await operation();
            if (record) latencies.push(performance.now() - t0);
          } catch {
            errors++;
          }
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    return { requests: latencies.length, rps: latencies.length / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors };
  };
  await run(options.warmupMs ?? 1000, false);
  return withDatabaseCpu(options.databaseCpuMs, () => run(options.durationMs, true));
}

/**
 * Runs one recorded run and adds PostgreSQL's CPU per request over it, where `databaseCpuMs` can tell, and the
 * serving process's, where `serverCpuMs` can.
 */
export async function withDatabaseCpu(
  databaseCpuMs: (() => number | undefined) | undefined,
  recorded: () => Promise<Figures>,
  serverCpuMs?: () => number | undefined,
): Promise<Figures> {
  const before = databaseCpuMs?.();
  const serverBefore = serverCpuMs?.();
  const client = process.cpuUsage();
  const figures = await recorded();
  const clientUsage = process.cpuUsage(client);
  if (figures.requests) figures.clientMsPerRequest = (clientUsage.user + clientUsage.system) / 1000 / figures.requests;
  const after = before === undefined ? undefined : databaseCpuMs?.();
  const serverAfter = serverBefore === undefined ? undefined : serverCpuMs?.();
  if (before !== undefined && after !== undefined && figures.requests) figures.databaseMsPerRequest = (after - before) / figures.requests;
  if (serverBefore !== undefined && serverAfter !== undefined && figures.requests) figures.serverMsPerRequest = (serverAfter - serverBefore) / figures.requests;
  return figures;
}

/** What a load generator process is asked to do: GET a URL, or send a statement through pg, from `concurrency` loops. */
export type LoadJob = {
  concurrency: number;
  durationMs: number;
  /** The local cluster's postmaster: the generator then reports PostgreSQL's CPU per request over the recorded run. */
  postgresPid?: number;
  /** The process serving the URL: the generator then reports its CPU per request over the recorded run. */
  serverPid?: number;
} & ({ kind: 'http'; url: string; headers?: Record<string, string> } | { kind: 'sql'; databaseUrl: string; statement: { text: string; values: unknown[] } });

/** Runs `job` in a child process (load-worker.ts), so the generator's CPU never counts against the process measured. */
export function measureInChild(job: LoadJob): Promise<Figures> {
  return new Promise((resolve, reject) => {
    const child = fork(new URL('./load-worker.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (message: { figures?: Figures; error?: string }) => (message.figures ? resolve(message.figures) : reject(new Error(message.error))));
    child.once('error', reject);
    child.once('exit', (code) => code !== 0 && reject(new Error(`load generator exited with ${code}`)));
    child.send(job);
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** A GET over a keep-alive agent that fails on any non-200, so errors are counted, not timed. */
export function httpGet(url: string, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (response.statusCode === 200) resolve(body);
        else reject(new Error(`${response.statusCode}: ${body.slice(0, 200)}`));
      });
    });
    request.on('error', reject);
  });
}

export interface Row {
  name: string;
  gateway: Figures;
  baseline: Figures;
  baselineName: string;
}

const fmt = (n: number, digits = 1) => n.toFixed(digits).padStart(8);

/**
 * Prints one table: the endpoint beside its baseline, and the ratios (higher
 * throughput ratio is better). Where both runs measured PostgreSQL's CPU per
 * request, it adds those and their ratio (baseline / endpoint: how many
 * endpoint requests the database serves for one baseline statement's CPU).
 */
export function printTable(title: string, rows: Row[]): void {
  const withDatabase = rows.every((row) => row.gateway.databaseMsPerRequest !== undefined && row.baseline.databaseMsPerRequest !== undefined);
  const databaseColumns = (g: Figures, b: Figures) =>
    withDatabase
      ? ` | ${fmt(g.databaseMsPerRequest!, 3)} ${fmt(b.databaseMsPerRequest!, 3)} ${fmt(b.databaseMsPerRequest! / g.databaseMsPerRequest!, 1).padStart(9)}`
      : '';
  console.log(`\n${title}`);
  console.log(
    `${'case'.padEnd(44)} ${'rps'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} | ${'base rps'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} | ${'rps ratio'.padStart(9)} ${'p99 ratio'.padStart(9)}` +
      (withDatabase ? ` | ${'db ms'.padStart(8)} ${'base db'.padStart(8)} ${'db ratio'.padStart(9)}` : ''),
  );
  for (const row of rows) {
    const { gateway: g, baseline: b } = row;
    console.log(
      `${row.name.padEnd(44)} ${fmt(g.rps, 0)} ${fmt(g.p50Ms, 2)} ${fmt(g.p99Ms, 2)} | ${fmt(b.rps, 0)} ${fmt(b.p50Ms, 2)} ${fmt(b.p99Ms, 2)} | ${fmt(g.rps / b.rps, 2).padStart(9)} ${fmt(g.p99Ms / b.p99Ms, 2).padStart(9)}` +
        databaseColumns(g, b) +
        (g.errors || b.errors ? `  errors ${g.errors}/${b.errors}` : ''),
    );
  }
  console.log(
    `(baseline: ${rows[0]?.baselineName ?? ''}; rps ratio = endpoint / baseline, p99 ratio = endpoint / baseline` +
      (withDatabase ? '; db ms = PostgreSQL CPU per request, db ratio = baseline / endpoint)' : ')'),
  );
}
