import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleHandlers } from '../../support/bundles';

/**
 * The benches compare this checkout's bundles with another commit's
 * (test/bench/baseline.ts): a baseline bundle must take every workspace
 * package from that commit, or it measures today's telemetry against itself.
 */
describe('a bundle of another checkout', () => {
  const root = mkdtempSync(join(tmpdir(), 'hatchery-baseline-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it('takes each workspace package, platform included, from that checkout', async () => {
    for (const name of ['core', 'platform', 'functions']) write(`packages/${name}/package.json`, JSON.stringify({ name: `@hatchery/${name}` }));
    write('packages/platform/src/telemetry/origin.ts', "export const platform = 'the baseline platform';\n");
    write('packages/core/src/origin.ts', "export const core = 'the baseline core';\n");
    write(
      'packages/functions/src/probe.ts',
      "import { platform } from '@hatchery/platform/telemetry/origin';\nimport { core } from '@hatchery/core/origin';\nexport const handler = () => [platform, core];\n",
    );
    const [bundle] = await bundleHandlers(['packages/functions/src/probe.handler'], join(root, 'out'), root);
    const module = (await import(pathToFileURL(bundle!.file).href)) as { handler: () => string[] };
    expect(module.handler()).toEqual(['the baseline platform', 'the baseline core']);
  });
});
