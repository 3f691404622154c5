import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build } from '../../../packages/client/build.mjs';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..', '..', '..');
// The npm test runs under sets npm_* variables (its prefix, its workspace) that would point this npm at the repository.
const npmEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const npm = (args: string[], cwd: string) => run('npm', [...args, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd, env: npmEnv });

/**
 * An app outside the repository, as a TypeScript user writes one. Each
 * `exact` fails to compile unless the two types are identical (so an `any`
 * fails it too); each `@ts-expect-error` fails it if its error disappears.
 */
const consumer = `
import { createClient, filter, HatcheryProblem, isProblem, linkWallet, type Eip1193Provider, type RouteOutput } from '@hatchery/client';
import { connectEvents, type ForgeResult } from '@hatchery/client/events';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const exact = <A, B>(proof: Equal<A, B>) => proof;

const baseUrl = 'http://127.0.0.1:3000';
const client = createClient({ baseUrl, getToken: async () => 'token' });
const wallet = '0x000000000000000000000000000000000000000b';

export async function app(provider: Eip1193Provider) {
  const page = await client.api.listAccountNfts({ address: wallet, filter: filter.nfts.staked.eq(true), orderBy: (f) => f.tokenId.desc(), pageSize: 10 });
  exact<typeof page.items[0]['tokenId'], string>(true);
  exact<typeof page.items[0]['staked'], boolean>(true);
  exact<typeof page.totalCount, number>(true);
  exact<typeof page, RouteOutput<'listAccountNfts'>>(true);
  // @ts-expect-error a boolean field takes a boolean
  filter.nfts.staked.eq('x');
  // @ts-expect-error the listings' fields are not the NFTs'
  await client.api.listAccountNfts({ address: wallet, filter: filter.listings.price.gte(1n) });
  // @ts-expect-error the path parameter is required
  await client.api.listAccountNfts({ pageSize: 10 });

  try {
    await client.api.getMe();
  } catch (error) {
    if (isProblem(error, 422)) exact<typeof error.errors, Record<string, string[]> | undefined>(true);
    if (error instanceof HatcheryProblem) exact<typeof error.retryAfterMs, number | undefined>(true);
  }

  const outcome = await linkWallet(client, provider);
  if (outcome.ok) exact<typeof outcome.account.walletAddress, string | undefined>(true);
  else exact<typeof outcome.reason, 'account-has-wallet' | 'address-taken' | 'invalid' | 'challenge-expired'>(true);
  const linked = await client.requireWalletLinked({ address: wallet });
  exact<typeof linked.walletAddress, string>(true);

  const events = await connectEvents({ baseUrl, client, reconnectDelaysMs: [0, 1_000] });
  events.onMarketChanged((market) => exact<typeof market.maxBlock, string>(true));
  await events.subscribe(wallet);
  const forged = await events.waitForForgeFulfilled(wallet, '1', { pollChain: async () => undefined });
  exact<typeof forged, ForgeResult>(true);
  exact<typeof forged.source, 'event' | 'api' | 'chain'>(true);
  await events.close();
}
`;

const resolutions = { bundler: 'ESNext', node16: 'Node16', nodenext: 'NodeNext' } as const;
/** A guard, not a measure: the build and the type checks take seconds each on a loaded machine. */
const guard = 120_000;

describe('@hatchery/client as a TypeScript app outside the repository installs it', () => {
  let dir: string;
  let app: string;
  let packed: { filename: string; files: { path: string }[] };

  beforeAll(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), 'hatchery-client-consumer-')));
    const pkg = join(dir, 'package');
    // The package as its build leaves it (package.json and dist/), built afresh here.
    await build(join(pkg, 'dist'));
    await cp(join(root, 'packages', 'client', 'package.json'), join(pkg, 'package.json'));
    [packed] = JSON.parse((await npm(['pack', pkg, '--json', '--pack-destination', dir], dir)).stdout);
    app = join(dir, 'app');
    await mkdir(app);
    await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await npm(['install', join(dir, packed.filename)], app);
    // The optional peer dependency, installed by the app: the version this repository tests against.
    await mkdir(join(app, 'node_modules', '@microsoft'));
    await symlink(join(root, 'node_modules', '@microsoft', 'signalr'), join(app, 'node_modules', '@microsoft', 'signalr'), 'dir');
    await writeFile(join(app, 'consumer.ts'), consumer);
  }, guard);

  afterAll(() => dir && rm(dir, { recursive: true, force: true }));

  it('packs the declarations beside the bundle, and no source', async () => {
    const paths = packed.files.map((file) => file.path).sort();
    expect(paths).toContain('dist/index.d.ts');
    expect(paths).toContain('dist/events.d.ts');
    expect(paths.filter((path) => !/^dist\/[\w-]+\.(js|d\.ts)$/.test(path))).toEqual(['package.json']);
    const manifest = JSON.parse(await readFile(join(app, 'node_modules', '@hatchery', 'client', 'package.json'), 'utf8'));
    for (const conditions of Object.values<Record<string, string>>(manifest.exports)) {
      // TypeScript reads the first condition that matches: "types" after "default" would never be read.
      expect(Object.keys(conditions)).toEqual(['types', 'default']);
      expect(paths).toContain(conditions.types!.replace(/^\.\//, ''));
      expect(paths).toContain(conditions.default!.replace(/^\.\//, ''));
    }
  });

  it('declares types that import only each other and @microsoft/signalr', async () => {
    const dist = join(app, 'node_modules', '@hatchery', 'client', 'dist');
    const declarations = (await readdir(dist)).filter((file) => file.endsWith('.d.ts'));
    const specifiers = new Set<string>();
    for (const file of declarations) {
      const text = await readFile(join(dist, file), 'utf8');
      for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'([^']+)'/g)) specifiers.add(specifier!);
    }
    expect(specifiers.size).toBeGreaterThan(1);
    for (const specifier of specifiers) {
      if (specifier === '@microsoft/signalr') continue;
      expect(specifier).toMatch(/^\.\/[\w-]+\.js$/);
      expect(declarations).toContain(specifier.replace(/^\.\/(.*)\.js$/, '$1.d.ts'));
    }
  });

  it.each(Object.entries(resolutions))(
    'type-checks under strict with moduleResolution %s',
    async (resolution, module) => {
      const compilerOptions = {
        target: 'ES2022',
        lib: ['ES2022', 'DOM'],
        module,
        moduleResolution: resolution,
        strict: true,
        noEmit: true,
        types: [],
        // The package's declarations and the peer's are checked; TypeScript's own lib files need not be, every time.
        skipLibCheck: false,
        skipDefaultLibCheck: true,
      };
      const { errors, read } = typeCheck(compilerOptions, [join(app, 'consumer.ts')], app);
      expect(errors).toEqual([]);
      const signalr = await realpath(join(app, 'node_modules', '@microsoft', 'signalr'));
      expect(read).toContain(join(app, 'node_modules', '@hatchery', 'client', 'dist', 'index.d.ts'));
      // Nothing of the repository's (zod, the server's packages) is read: the package, the peer and TypeScript's own lib files only.
      expect(read.filter((file) => !file.startsWith(`${app}/`) && !file.startsWith(`${signalr}/`) && dirname(file) !== typescriptLib)).toEqual([]);
    },
    guard,
  );
});

/** TypeScript's own lib files, parsed once for every check: each check is otherwise a fresh tsc. */
const typescriptLib = dirname(ts.getDefaultLibFilePath({}));
const libFiles = new Map<string, ts.SourceFile | undefined>();

/** What tsc reports for these files under these options, as a TypeScript app's own tsc run would: its errors and every file it read. */
function typeCheck(compilerOptions: Record<string, unknown>, rootNames: string[], cwd: string): { errors: string[]; read: string[] } {
  const { options, errors: optionErrors } = ts.convertCompilerOptionsFromJson(compilerOptions, cwd);
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    if (dirname(fileName) !== typescriptLib) return getSourceFile(fileName, languageVersion, ...rest);
    const key = `${fileName}\0${JSON.stringify(languageVersion)}`;
    if (!libFiles.has(key)) libFiles.set(key, getSourceFile(fileName, languageVersion, ...rest));
    return libFiles.get(key);
  };
  host.getCurrentDirectory = () => cwd;
  const program = ts.createProgram({ rootNames, options, host });
  const errors = [...optionErrors, ...ts.getPreEmitDiagnostics(program)].map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
  return { errors, read: program.getSourceFiles().map((file) => file.fileName) };
}
