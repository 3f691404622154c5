import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '@hatchery/functions/routes';
import { wsRoutes } from '@hatchery/functions/routes/realtime';
import { readRouteNames, sizeBudget, sizeBudgets } from '../support/budgets';
import { buildLibraryFloor, directLibraries, floorSource } from '../deploy/library-floor';
import { editionsPageStatements } from '../deploy/pg-only';
import { selfTimes, type CpuProfile } from './cpu-profile';

/** The bench's own instruments: the budgets, the library floors, the pg-only baseline's statements, a profile's self times. */
const workdir = mkdtempSync(join(tmpdir(), 'hatchery-instruments-'));
afterAll(() => rmSync(workdir, { recursive: true, force: true }));

describe('the size budgets of test/budgets.json', () => {
  it('give /accounts/me and what is under it the account budget, other HTTP routes the HTTP one (wallet reads included), the hub and fan-out theirs; exempt the migrator alone', () => {
    const budgets = Object.fromEntries(
      Object.values(httpRoutes).map((route) => [`${route.method} ${route.path}`, sizeBudget({ role: 'http', key: `${route.method} ${route.path}` })]),
    );
    expect(budgets['GET /accounts/me']).toBe(sizeBudgets.account);
    expect(budgets['POST /accounts/me/wallet/nonce']).toBe(sizeBudgets.account);
    expect(budgets['GET /accounts/{address}/nfts']).toBe(sizeBudgets.http);
    expect(budgets['GET /openapi.json']).toBe(sizeBudgets.http);
    expect(sizeBudget({ role: 'http', key: 'GET /accounts/meadow' })).toBe(sizeBudgets.http);
    for (const route of wsRoutes) expect(sizeBudget({ role: 'hub', key: route.routeKey })).toBe(sizeBudgets.hub);
    expect(sizeBudget({ role: 'fanOut', key: 'Function FanOut' })).toBe(sizeBudgets.hub);
    expect(sizeBudget({ role: 'migrator', key: 'Function Migrator' })).toBe('exempt');
    expect(sizeBudget({ role: 'other', key: 'Function Unknown' })).toBeUndefined();
  });

  it('name as read routes GETs that need no token, one per name', () => {
    expect(new Set(readRouteNames).size).toBe(readRouteNames.length);
    for (const name of readRouteNames) expect([httpRoutes[name].method, httpRoutes[name].auth]).toEqual(['GET', 'none']);
  });
});

describe('a function’s library floor', () => {
  it('holds the third-party libraries its own code imports, each constructed, and none of Hatchery’s code', async () => {
    const libraries = await directLibraries('packages/functions/src/http/list-editions.ts');
    expect(libraries).toEqual(expect.arrayContaining(['pg', 'zod', '@middy/core', '@aws-lambda-powertools/logger', '@aws-lambda-powertools/metrics']));
    expect(libraries.filter((name) => name.startsWith('@hatchery/'))).toEqual([]);
    const floor = await buildLibraryFloor(libraries, workdir);
    const code = readFileSync(floor.file, 'utf8');
    expect(code).not.toMatch(/packages\/(core|functions|platform)\//);
    const { handler } = (await import(pathToFileURL(floor.file).href)) as { handler: (event: unknown, context: unknown) => Promise<unknown> };
    expect(await handler({}, { awsRequestId: 'floor', functionName: 'floor' })).toEqual({ statusCode: 200, body: '{}' });
  }, 60_000);

  it('refuses a library it has no construction for, so a new dependency is given one on purpose', () => {
    expect(() => floorSource(['left-pad'])).toThrow(/no construction for left-pad/);
  });
});

describe('the pg-only baseline’s statements', () => {
  it('are core’s for the default page of editions, on the schema asked for, and leave the environment as it was', () => {
    const before = process.env.INDEXER_SCHEMA;
    const statements = editionsPageStatements('bench_schema');
    expect(statements.page.text).toMatch(/FROM "bench_schema"\.editions/);
    expect(statements.count.text).toMatch(/^SELECT count\(\*\) AS total_count FROM "bench_schema"\.editions/);
    expect(process.env.INDEXER_SCHEMA).toBe(before);
    expect(editionsPageStatements(undefined).page.text).toMatch(/FROM "indexer"\.editions/);
  });
});

describe('a CPU profile’s self times', () => {
  it('add each sample’s time to its frame, keep idle apart, place a bundle’s frames in its sources, and name native bindings', async () => {
    const source = join(workdir, 'source.ts');
    writeFileSync(source, 'export function outer() {\n  return inner() + 1;\n}\n\nexport function inner() {\n  return 41;\n}\n');
    const bundle = join(workdir, 'bundle.mjs');
    await build({ entryPoints: [source], outfile: bundle, bundle: true, format: 'esm', sourcemap: true, logLevel: 'silent' });
    const code = readFileSync(bundle, 'utf8');
    const at = (needle: string) => {
      const before = code.slice(0, code.indexOf(needle)).split('\n');
      return { lineNumber: before.length - 1, columnNumber: before.at(-1)!.length };
    };
    const url = pathToFileURL(bundle).href;
    const frame = (id: number, functionName: string, place: { url: string; lineNumber: number; columnNumber: number }) => ({
      id,
      callFrame: { functionName, ...place },
    });
    const profile: CpuProfile = {
      nodes: [
        frame(1, '(root)', { url: '', lineNumber: -1, columnNumber: -1 }),
        frame(2, '(idle)', { url: '', lineNumber: -1, columnNumber: -1 }),
        frame(3, 'outer', { url, ...at('function outer') }),
        frame(4, 'inner', { url, ...at('function inner') }),
        frame(5, 'writev', { url: '', lineNumber: -1, columnNumber: -1 }),
      ],
      startTime: 0,
      endTime: 10_000,
      samples: [3, 4, 4, 2, 5, 4],
      // Each sample's time is the delta to the next one; the last has none.
      timeDeltas: [0, 1000, 2000, 3000, 500, 1500],
    };
    const { frames, busyMs, idleMs } = selfTimes(profile, workdir);
    expect(frames.map(({ name, location, selfMs }) => [name, location, selfMs])).toEqual([
      ['inner', `${relative(workdir, source)}:5`, 5],
      ['writev', '(native)', 1.5],
      ['outer', `${relative(workdir, source)}:1`, 1],
    ]);
    expect(busyMs).toBe(7.5);
    expect(idleMs).toBe(0.5);
  });
});
