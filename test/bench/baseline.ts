import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { repositoryRoot } from '../support/bundles';
import type { Probe } from '../support/bundles';
import { median } from './measure';

/** Another commit's packages, exported from git into `dir` (no checkout, no change to the repository); its short hash. */
export function exportBaseline(dir: string, ref: string): string {
  const commit = execFileSync('git', ['rev-parse', '--short', ref], { cwd: repositoryRoot, encoding: 'utf8' }).trim();
  mkdirSync(dir, { recursive: true });
  execFileSync('sh', ['-c', `git archive ${commit} packages | tar -x -C ${JSON.stringify(dir)}`], { cwd: repositoryRoot });
  return commit;
}

/** The median of several fresh processes' figures, or the first failure. */
export function summarize(probes: Probe[]): Probe {
  const failed = probes.find((each) => each.error);
  if (failed) return failed;
  return {
    importMs: median(probes.map((each) => each.importMs)),
    firstCallMs: median(probes.map((each) => each.firstCallMs)),
    warmCpuUs: median(probes.map((each) => each.warmCpuUs ?? 0)),
    statusCode: probes.at(-1)!.statusCode,
  };
}
