import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repository } from '../../support/docs';

/**
 * The rule README.md's Layout states: imports between the packages point one way, so the domain never depends on
 * how it is served, and the adapters to AWS and the wire carry no domain rule.
 */
const mayImport: Record<string, readonly string[]> = {
  platform: [],
  core: ['platform'],
  functions: ['core', 'platform'],
  listener: ['core', 'platform'],
  local: ['core', 'platform', 'functions', 'listener'],
  smoke: ['platform', 'functions'],
  client: [],
};

function sources(dir: string): string[] {
  return readdirSync(join(repository, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sources(path);
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

describe('the packages’ imports', () => {
  it('name every package', () => {
    expect(Object.keys(mayImport).sort()).toEqual(readdirSync(join(repository, 'packages')).sort());
  });

  it.each(Object.keys(mayImport))('packages/%s imports only the packages below it', (name) => {
    const wrong = sources(`packages/${name}/src`).flatMap((file) =>
      [...readFileSync(join(repository, file), 'utf8').matchAll(/['"]@hatchery\/([a-z-]+)[/'"]/g)]
        .map((match) => match[1]!)
        .filter((imported) => imported !== name && !mayImport[name]!.includes(imported))
        .map((imported) => `${file} → @hatchery/${imported}`),
    );
    expect(wrong).toEqual([]);
  });
});
