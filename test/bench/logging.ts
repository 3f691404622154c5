import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { BenchSection } from './context';
import { median } from './measure';

const run = promisify(execFile);
const candidates = ['service logger (Powertools)', 'pino (mixin + redact)', 'pino (child per request)', 'Powertools Logger (appendKeys)'];

/** CPU per request line of each logger candidate, each in fresh processes writing to /dev/null; the median of BENCH_LOGGING_RUNS (default 5). */
export async function measureLogging(runs = Number(process.env.BENCH_LOGGING_RUNS ?? 5), requests = 20_000) {
  const rows: { candidate: string; cpuUs: number; wallUs: number }[] = [];
  for (const candidate of candidates) {
    const samples: { cpuUs: number; wallUs: number }[] = [];
    // Interleaved runs would be fairer on a busy machine, but each candidate's process is short; median of several is enough.
    for (let i = 0; i < runs; i++) {
      const child = run(process.execPath, ['--import', 'tsx', 'test/bench/logging-worker.ts'], {
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', LOGGING_CANDIDATE: candidate, LOGGING_REQUESTS: String(requests) },
        maxBuffer: 1024 * 1024 * 1024,
      });
      const { stderr } = await child;
      samples.push(JSON.parse(stderr.trim().split('\n').at(-1)!) as { cpuUs: number; wallUs: number });
    }
    rows.push({ candidate, cpuUs: median(samples.map((sample) => sample.cpuUs)), wallUs: median(samples.map((sample) => sample.wallUs)) });
  }
  return rows;
}

export const loggingBench: BenchSection = async () => {
  const rows = await measureLogging();
  const baseline = rows[0]!;
  console.log('\nOne request line per logger (fields: request id, route, account id, status, duration), CPU per line, median of fresh processes');
  console.log(`${'logger'.padEnd(34)} ${'CPU µs'.padStart(8)} ${'wall µs'.padStart(8)} ${'CPU ratio'.padStart(10)}`);
  for (const row of rows) {
    console.log(
      `${row.candidate.padEnd(34)} ${row.cpuUs.toFixed(2).padStart(8)} ${row.wallUs.toFixed(2).padStart(8)} ${(row.cpuUs / baseline.cpuUs).toFixed(2).padStart(10)}`,
    );
  }
  console.log(`(ratio = logger / ${baseline.candidate})`);
};
