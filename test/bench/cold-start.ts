import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureColdStarts, printColdStarts } from '../deploy/cold-start';
import type { BenchSection } from './context';

/**
 * Each deployed function's bundle (built as SST builds it) and cold start:
 * the import (Lambda's init phase) and the first call, in fresh processes,
 * the median of BENCH_COLD_START_RUNS (default 31) per function, beside a
 * pg-only bundle of GET /editions' page query probed in the same rounds, and
 * the goals of test/budgets.json.
 */
export const coldStartBench: BenchSection = async ({ stack, sql }) => {
  const loadAtStart = loadavg()[0]!;
  // 31 rounds: one fresh process's import varies by about 15 % here, so with fewer the medians of functions of the
  // same code (the paged reads) spread by more than a tenth of their ratio to the floor.
  const times = Number(process.env.BENCH_COLD_START_RUNS ?? 31);
  const workdir = await mkdtemp(join(tmpdir(), 'hatchery-cold-start-'));
  const database = 'bench_migrated_on_deploy';
  await sql.query(`DROP DATABASE IF EXISTS ${database}`);
  await sql.query(`CREATE DATABASE ${database}`);
  const migrationUrl = new URL(stack.databaseUrl);
  migrationUrl.pathname = `/${database}`;
  try {
    const { functions, baseline } = await measureColdStarts(
      {
        databaseUrl: stack.databaseUrl,
        dynamoEndpoint: stack.dynamoEndpoint,
        managementEndpoint: stack.url,
        idpProjectId: stack.idp.projectId,
      },
      workdir,
      migrationUrl.href,
      times,
      { baseline: true, floors: true },
    );
    printColdStarts(functions, { times, baseline, loadAtStart });
  } finally {
    await rm(workdir, { recursive: true, force: true });
    await sql.query(`DROP DATABASE IF EXISTS ${database}`);
  }
};
