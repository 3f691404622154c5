/**
 * test/deploy/replace-forcing.json (derived by test/deploy/replace-forcing/derive.ts)
 * covers every stateful type, names its source, and names only inputs the
 * installed SDK has (a renamed input would silently never match).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, expect, it } from 'vitest';
import { statefulResources } from '../../infra/stateful';
import type { ReplaceForcingRecord } from './replace-forcing/derive';
import { argsOf } from './replace-forcing/sdk-args';
import { ensurePlatform } from './sst/platform';

const replaceForcing = (JSON.parse(readFileSync(new URL('./replace-forcing.json', import.meta.url), 'utf8')) as ReplaceForcingRecord).types;

beforeAll(() => ensurePlatform(), 300_000);

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
