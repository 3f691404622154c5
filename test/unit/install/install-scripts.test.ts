import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repository } from '../../support/docs';

/**
 * What `npm ci` prints, as README.md's "Run it" says: no `install-scripts` notice, because package.json's
 * `allowScripts` names every package of the lock that has an install script, and Scarf's analytics are denied.
 */
const manifest = JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as {
  allowScripts: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(repository, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { name?: string; hasInstallScript?: boolean }>;
};

/** node_modules/a/node_modules/@b/c → @b/c */
const packageName = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts', () => {
  const withScripts = [...new Set(Object.entries(lock.packages).flatMap(([path, entry]) => (entry.hasInstallScript && path ? [packageName(path)] : [])))];

  it('allowScripts decides on every package of the lock that has one, and on nothing else', () => {
    expect(withScripts.length).toBeGreaterThan(3);
    expect(withScripts.filter((name) => !(name in manifest.allowScripts))).toEqual([]);
    expect(Object.keys(manifest.allowScripts).filter((name) => !withScripts.includes(name))).toEqual([]);
  });

  it('Scarf’s analytics postinstall is denied, and turned off for an npm without the policy', () => {
    expect(manifest.allowScripts['@scarf/scarf']).toBe(false);
    expect(manifest.scarfSettings).toEqual({ enabled: false });
    expect(
      Object.entries(manifest.allowScripts)
        .filter(([, allowed]) => !allowed)
        .map(([name]) => name),
    ).toEqual(['@scarf/scarf']);
  });
});
