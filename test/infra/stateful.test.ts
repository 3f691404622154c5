/**
 * The replace-forcing inputs of test/infra/replace-forcing.json are inputs the
 * installed AWS provider's SDK has (a renamed input would silently never
 * match), of types the upgrade check records.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { statefulResources } from '../../infra/stateful';
import { ensurePlatform, platformDir } from './sst/platform';

const replaceForcing = (JSON.parse(readFileSync(new URL('./replace-forcing.json', import.meta.url), 'utf8')) as { types: Record<string, { inputs: string[] }> })
  .types;

beforeAll(() => ensurePlatform(), 300_000);

/** The input names of a resource's Args interface in @pulumi/aws's declarations, from its type token (aws:<module>/<file>:<Type>). */
function argsOf(type: string): string[] {
  const [, module, file, resource] = /^aws:([^/]+)\/([^:]+):(.+)$/.exec(type)!;
  const declarations = readFileSync(join(platformDir, 'node_modules', '@pulumi', 'aws', module!, `${file}.d.ts`), 'utf8');
  const body = new RegExp(`export interface ${resource}Args \\{([\\s\\S]*?)\\n\\}`).exec(declarations)?.[1] ?? '';
  return [...body.matchAll(/^\s{4}(\w+)\??:/gm)].map((match) => match[1]!);
}

it('names only inputs the installed @pulumi/aws has, of resource types the upgrade check records', () => {
  expect(Object.keys(replaceForcing).filter((type) => !(type in statefulResources))).toEqual([]);
  for (const [type, { inputs }] of Object.entries(replaceForcing)) {
    const args = argsOf(type);
    expect(args.length, type).toBeGreaterThan(10);
    expect(
      inputs.filter((input) => !args.includes(input)),
      type,
    ).toEqual([]);
  }
});
