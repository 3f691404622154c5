import { readFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { buildOptions, minifiedWhole } from '../../../packages/client/build.mjs';
import { routeTypes, routeTypesFile, wireTable, wireTableFile } from '../../../packages/client/scripts/generate-routes';
import type { ServerTypes } from '../../../packages/client/scripts/server-types';
import type * as generated from '../../../packages/client/src/route-types';
import { clientBudget } from '../../support/budgets';

describe('@hatchery/client as published', () => {
  it(`is at most ${clientBudget.gzipBytes / 1024} KB min+gzip without @microsoft/signalr (test/budgets.json)`, async () => {
    const bundle = await minifiedWhole();
    const gzipped = gzipSync(bundle, { level: 9 }).length;
    console.log(`@hatchery/client: ${bundle.length} bytes minified, ${gzipped} bytes min+gzip (without @microsoft/signalr)`);
    expect(gzipped).toBeLessThanOrEqual(clientBudget.gzipBytes);
    const text = new TextDecoder().decode(bundle);
    // signalr stays the app's (a peer dependency); zod and the server's code never reach the browser.
    expect(text).toMatch(/from"@microsoft\/signalr"/);
    expect(text).not.toMatch(/ZodError|node:|pg-pool|middy/);
  });

  it('builds for the browser: a Node built-in anywhere in it would fail the build', async () => {
    const result = await esbuild.build({ ...buildOptions(), write: false, metafile: true });
    expect(result.errors).toEqual([]);
    const inputs = Object.keys(result.metafile!.inputs);
    expect(inputs.every((input) => input.startsWith('packages/client/src/'))).toBe(true);
    await expect(
      esbuild.build({
        ...buildOptions(),
        write: false,
        stdin: { contents: `import 'node:crypto'`, loader: 'ts' },
        entryPoints: undefined,
        splitting: false,
        outdir: undefined,
        logLevel: 'silent',
      }),
    ).rejects.toThrow(/node:crypto/);
  });

  it("carries the route table's methods, paths and auth as generated from it", async () => {
    expect(await readFile(wireTableFile, 'utf8')).toBe(wireTable());
  });

  it("types every route as the server's schemas do, in types that name neither zod nor the server", async () => {
    // Checked by tsc (npm run typecheck): a generated type that differs from the server's fails to compile here.
    expectTypeOf<generated.RouteTypes>().toEqualTypeOf<ServerTypes['RouteTypes']>();
    expectTypeOf<generated.ProblemBody>().toEqualTypeOf<ServerTypes['ProblemBody']>();
    expectTypeOf<generated.MarketChanged>().toEqualTypeOf<ServerTypes['MarketChanged']>();
    expectTypeOf<generated.ForgeFulfilled>().toEqualTypeOf<ServerTypes['ForgeFulfilled']>();
    expectTypeOf<generated.HubEventName>().toEqualTypeOf<ServerTypes['HubEventName']>();
    expectTypeOf<generated.HubPath>().toEqualTypeOf<ServerTypes['HubPath']>();
    expectTypeOf<generated.FieldType>().toEqualTypeOf<ServerTypes['FieldType']>();
    // And the file is what the generator prints today.
    const text = await readFile(routeTypesFile, 'utf8');
    expect(text).toBe(routeTypes());
    expect(text).not.toMatch(/^import /m);
  }, 60_000);
});
