/**
 * test/infra/replace-forcing.json (derived by test/infra/replace-forcing/derive.ts)
 * covers every stateful type, names its source, and names only inputs the
 * installed SDK has (a renamed input would silently never match).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { statefulResources } from '../../infra/stateful';
import { ensurePlatform, platformDir } from './sst/platform';

const replaceForcing = (
  JSON.parse(readFileSync(new URL('./replace-forcing.json', import.meta.url), 'utf8')) as {
    types: Record<string, { source: string; inputs: string[]; conditionally?: string[]; unverified?: true; notDerived?: string }>;
  }
).types;

beforeAll(() => ensurePlatform(), 300_000);

/** The input names of a resource's Args interface in the installed SDK's declarations, from its type token (aws:<module>/<file>:<Type>, random:index/<file>:<Type>). */
function argsOf(type: string): string[] {
  const [, pkg, module, file, resource] = /^(aws|random):([^/]+)\/([^:]+):(.+)$/.exec(type)!;
  const dir = join(platformDir, 'node_modules', '@pulumi', pkg!);
  const declarations = readFileSync(pkg === 'random' ? join(dir, `${file}.d.ts`) : join(dir, module!, `${file}.d.ts`), 'utf8');
  const body = new RegExp(`export interface ${resource}Args \\{([\\s\\S]*?)\\n\\}`).exec(declarations)?.[1] ?? '';
  return [...body.matchAll(/^\s{4}(\w+)\??:/gm)].map((match) => match[1]!);
}

it('has an entry with its source for every stateful type, and none for another', () => {
  expect(Object.keys(replaceForcing).sort()).toEqual(Object.keys(statefulResources).sort());
  for (const [type, { source, unverified, notDerived }] of Object.entries(replaceForcing))
    if (!unverified) expect(source, type).toMatch(/terraform-provider-(aws|random) \S+\.go @ [0-9a-f]{40}/);
    // An entry derive.ts could not derive says why, and where its kept inputs came from.
    else {
      expect(notDerived, type).toMatch(/\S/);
      expect(source, type).toMatch(/^NOT DERIVED from hashicorp\/terraform-provider-aws \S+\.go; the inputs are the previous entry’s: /);
    }
  // random's entries are derived at the commit @pulumi/random builds from; only AWS types may be left underived.
  expect(Object.keys(replaceForcing).filter((type) => replaceForcing[type]!.unverified && !type.startsWith('aws:'))).toEqual([]);
});

it('names only inputs the installed SDK has', () => {
  for (const [type, { inputs, conditionally = [] }] of Object.entries(replaceForcing)) {
    const args = argsOf(type);
    // A declaration this regex misread would read as no inputs at all.
    expect(args.length, type).toBeGreaterThan(2);
    expect(
      [...inputs, ...conditionally].filter((input) => !args.includes(input)),
      type,
    ).toEqual([]);
  }
});
