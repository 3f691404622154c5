import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DeployRequest, DeployResult } from './deploy';
import { repositoryRoot } from './platform';

const execFileAsync = promisify(execFile);
const tsx = join(repositoryRoot, 'node_modules', '.bin', 'tsx');

/** One `sst deploy` program run under Pulumi's mocks, in its own process (Pulumi's runtime is per process). */
export async function runDeploy(request: DeployRequest): Promise<DeployResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hatchery-deploy-request-'));
  try {
    writeFileSync(join(dir, 'request.json'), JSON.stringify(request));
    // Only what a platform team's shell would have: no test-runner variables leak into the deploy.
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TMPDIR: process.env.TMPDIR ?? tmpdir() };
    // A failed deploy leaves Pulumi promises pending, and Pulumi then ends the process with an error code; the result file says what happened.
    const exited = await execFileAsync(tsx, [join(repositoryRoot, 'test/deploy/sst/deploy.ts'), join(dir, 'request.json'), join(dir, 'result.json')], {
      cwd: repositoryRoot,
      env,
      timeout: 450_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: Error & { stderr?: string }) => error);
    if (!existsSync(join(dir, 'result.json')))
      throw new Error(`the deploy process wrote no result: ${exited instanceof Error ? `${exited.message}\n${exited.stderr ?? ''}` : ''}`);
    return JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')) as DeployResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Deploys each request, two at a time (the machine's cores), in the order given: the deploys share one directory of
 * function bundles, so a function the first ones built the rest copy.
 */
export async function runDeploys(requests: readonly DeployRequest[]): Promise<DeployResult[]> {
  const bundles = mkdtempSync(join(tmpdir(), 'hatchery-deploy-bundles-'));
  try {
    return await inBatches(requests, 2, (request) => runDeploy({ ...request, bundles }));
  } finally {
    rmSync(bundles, { recursive: true, force: true });
  }
}

/** Runs `work` over `items`, at most `limit` at a time. */
async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index]!);
      }
    }),
  );
  return results;
}
