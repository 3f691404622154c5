import http from 'node:http';
import pg from 'pg';
import { postgresCpuMs } from './database-cpu';
import { measure, type Figures, type LoadJob } from './measure';

/**
 * The load generator, run as its own process (see measureInChild): it gets
 * one job over IPC, drives it, and sends the figures back. Its CPU is not
 * the measured process's.
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function httpGet(url: string, headers: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`status ${response.statusCode}`))));
    });
    request.on('error', reject);
  });
}

async function run(job: LoadJob): Promise<Figures> {
  const { postgresPid } = job;
  const databaseCpuMs = postgresPid === undefined ? undefined : () => postgresCpuMs(postgresPid);
  const options = { concurrency: job.concurrency, durationMs: job.durationMs, databaseCpuMs };
  if (job.kind === 'http') return measure(() => httpGet(job.url, job.headers ?? {}), options);
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
