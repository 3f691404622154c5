/**
 * The real Ponder indexer against a real local chain, for tests: solc-js compiles test/stack/ponder/contracts,
 * a Hardhat node (npm `hardhat`, as a child process) runs them, and `ponder start` (npm `ponder`, the app in
 * test/stack/ponder/app) indexes them into the PostgreSQL the test names, in Ponder's direct or views layout.
 *
 * Every child (the node, Ponder) runs in a process group of its own, on this project's Node (the npm package
 * `node`), and is SIGTERMed then SIGKILLed as a group on stop() and when this process exits.
 *
 * `npx tsx test/stack/ponder/chain.ts write-abis` rewrites app/abis.ts from the contracts (the smoke test fails
 * when they differ).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';
import { freePort } from '@hatchery/local/ports';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEventLogs,
  type Address,
  type Hash,
  type Hex,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { hardhat } from 'viem/chains';
import { hatcheryAbi, hatchTokenAbi } from './app/abis';

export { freePort };

const here = dirname(fileURLToPath(import.meta.url));
export const appDir = join(here, 'app');
const require = createRequire(import.meta.url);

/** The folder of an installed package, found as Node would (walking up through node_modules), exports map or not. */
function packageDir(name: string): string {
  for (let dir = here; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed (npm ci)`);
  }
}

/** The project's own Node (npm `node`, 24) when installed, else this process's: Ponder wants Node 22 or later. */
const nodeBinary = () => {
  try {
    return join(packageDir('node'), 'bin', 'node');
  } catch {
    return process.execPath;
  }
};

// ---------------------------------------------------------------------------------------------------------------
// Children in process groups of their own

/** A child running in a process group of its own, with its recent output kept. */
export interface Child {
  readonly process: ChildProcess;
  logs(): string[];
  /** Resolves when it has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM to the whole group, SIGKILL after `graceMs`, then waits for the exit. */
  stop(graceMs?: number): Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

function spawnGroup(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; maxLogLines?: number }): Child {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // A test process that dies (or forgets stop()) leaves no chain or indexer behind.
    process.on('exit', () => {
      for (const child of live) killGroup(child, 'SIGKILL');
    });
  }
  const maxLogLines = options.maxLogLines ?? 2_000;
  const lines: string[] = [];
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once('exit', (code, signal) => {
      live.delete(child);
      // Whatever it started in its group goes with it.
      killGroup(child, 'SIGKILL');
      resolveExit({ code, signal });
    });
    child.once('error', (error) => {
      live.delete(child);
      lines.push(`spawn error: ${error.message}`);
      resolveExit({ code: null, signal: null });
    });
  });
  let partial = '';
  const onData = (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      lines.push(line);
      if (lines.length > maxLogLines) lines.shift();
    }
  };
  child.stdout!.setEncoding('utf8').on('data', onData);
  child.stderr!.setEncoding('utf8').on('data', onData);
  return {
    process: child,
    logs: () => (partial ? [...lines, partial] : [...lines]),
    exited,
    async stop(graceMs = 8_000) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      killGroup(child, 'SIGTERM');
      const outcome = await Promise.race([exited.then(() => 'exited' as const), sleep(graceMs).then(() => 'timeout' as const)]);
      if (outcome === 'timeout') killGroup(child, 'SIGKILL');
      await exited;
    },
  };
}

/** Resolves once `ready()` is true; rejects when the child exits first or `timeoutMs` passes, with its last log lines. */
async function waitUntil(
  what: string,
  child: Pick<Child, 'logs' | 'exited' | 'stop'>,
  ready: () => Promise<boolean> | boolean,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void child.exited.then(() => (exited = true));
  for (;;) {
    if (await ready()) return;
    if (exited) throw new Error(`${what} exited before it was ready:\n${child.logs().slice(-40).join('\n')}`);
    if (Date.now() > deadline) {
      await child.stop();
      throw new Error(`${what} was not ready within ${timeoutMs} ms:\n${child.logs().slice(-40).join('\n')}`);
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Compiling

export interface CompiledContract {
  abi: unknown[];
  bytecode: Hex;
}

export interface Compiled {
  Hatchery: CompiledContract;
  HatchToken: CompiledContract;
  solcVersion: string;
  /** How long this call took: 0-ish from the in-memory cache, a few ms from the file cache, about a second with solc. */
  ms: number;
  source: 'memory' | 'file' | 'solc';
}

const contractFile = join(here, 'contracts', 'Hatchery.sol');
let compiled: Promise<Omit<Compiled, 'ms' | 'source'>> | undefined;

/**
 * Compiles contracts/Hatchery.sol with solc-js (npm `solc`, no download), cached in memory and in a file
 * under the temp folder keyed by the source and the compiler version (each vitest file is its own process).
 */
export async function compileContracts(): Promise<Compiled> {
  const started = performance.now();
  if (compiled) {
    const result = await compiled;
    return { ...result, ms: performance.now() - started, source: 'memory' };
  }
  let source: Compiled['source'] = 'file';
  compiled = (async () => {
    const content = await readFile(contractFile, 'utf8');
    const solcPackage = JSON.parse(await readFile(join(packageDir('solc'), 'package.json'), 'utf8')) as { version: string };
    const key = createHash('sha256').update(solcPackage.version).update('\0').update(content).digest('hex').slice(0, 16);
    const cacheFile = join(tmpdir(), 'hatchery-solc-cache', `${key}.json`);
    try {
      return JSON.parse(await readFile(cacheFile, 'utf8')) as Omit<Compiled, 'ms' | 'source'>;
    } catch {
      // Not cached yet.
    }
    source = 'solc';
    const solc = require('solc') as { compile(input: string): string; version(): string };
    const input = {
      language: 'Solidity',
      sources: { 'Hatchery.sol': { content } },
      settings: {
        optimizer: { enabled: true, runs: 200 },
        evmVersion: 'cancun',
        outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
      },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: Array<{ severity: string; formattedMessage: string }>;
      contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
    if (errors.length) throw new Error(`solc: ${errors.map((error) => error.formattedMessage).join('\n')}`);
    const contract = (name: string): CompiledContract => {
      const found = output.contracts?.['Hatchery.sol']?.[name];
      if (!found) throw new Error(`solc produced no ${name}`);
      return { abi: found.abi, bytecode: `0x${found.evm.bytecode.object}` };
    };
    const result = { Hatchery: contract('Hatchery'), HatchToken: contract('HatchToken'), solcVersion: solc.version() };
    await mkdir(dirname(cacheFile), { recursive: true });
    // Written whole then renamed, so a parallel test file never reads half of it.
    const partial = `${cacheFile}.${process.pid}.tmp`;
    await writeFile(partial, JSON.stringify(result));
    await rename(partial, cacheFile);
    return result;
  })();
  try {
    const result = await compiled;
    return { ...result, ms: performance.now() - started, source };
  } catch (error) {
    compiled = undefined;
    throw error;
  }
}

/** One ABI entry a line. */
const abiLiteral = (abi: unknown[]) => `[\n${abi.map((entry) => `  ${JSON.stringify(entry)},\n`).join('')}]`;

/** The text of app/abis.ts for these ABIs (the app needs them as `as const` literals for its types). */
export function abisModule(result: Pick<Compiled, 'Hatchery' | 'HatchToken'>): string {
  return [
    '// Generated from test/stack/ponder/contracts/Hatchery.sol by `npx tsx test/stack/ponder/chain.ts write-abis`; do not edit.',
    `export const hatcheryAbi = ${abiLiteral(result.Hatchery.abi)} as const;`,
    '',
    `export const hatchTokenAbi = ${abiLiteral(result.HatchToken.abi)} as const;`,
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The chain

export interface Chain {
  rpcUrl: string;
  port: number;
  chainId: 31337;
  /** Hardhat's ten funded, unlocked accounts; accounts[0] deploys and is the contracts' admin. */
  accounts: Address[];
  publicClient: PublicClient;
  walletClient: WalletClient;
  testClient: TestClient<'hardhat'>;
  blockNumber(): Promise<bigint>;
  /** evm_snapshot: the id to revert to. */
  snapshot(): Promise<Hex>;
  /** evm_revert: back to the snapshot's state (blocks after it are gone); a snapshot can be reverted to once. */
  revert(id: Hex): Promise<void>;
  /**
   * `count` empty blocks, one evm_mine each (3 ms a block). Not hardhat_mine: Hardhat 2.29 serves the blocks it
   * mines that way (reserved, made on demand) with parentHash 0x00…00 and one timestamp, which Ponder takes for
   * a reorg below its finalized block ("Encountered unrecoverable reorg") and then indexes nothing more.
   */
  mine(count?: number): Promise<bigint>;
  logs(): string[];
  stop(): Promise<void>;
}

/** Starts a Hardhat node (chain id 31337, automine: one block per transaction) on a free port. */
export async function startChain(options: { timeoutMs?: number } = {}): Promise<Chain> {
  const port = await freePort();
  const rpcUrl = `http://127.0.0.1:${port}`;
  const child = spawnGroup(
    nodeBinary(),
    [
      join(packageDir('hardhat'), 'internal', 'cli', 'bootstrap.js'),
      '--config',
      join(here, 'hardhat.config.cjs'),
      'node',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { cwd: here, env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NO_COLOR: '1' } },
  );
  try {
    await waitUntil(
      'the Hardhat node',
      child,
      () => child.logs().some((line) => line.includes('Started HTTP and WebSocket JSON-RPC server')),
      options.timeoutMs ?? 60_000,
    );
  } catch (error) {
    await child.stop();
    throw error;
  }
  const transport = http(rpcUrl, { retryCount: 0 });
  const publicClient = createPublicClient({ chain: hardhat, transport, pollingInterval: 50 }) as PublicClient;
  const walletClient = createWalletClient({ chain: hardhat, transport });
  const testClient = createTestClient({ chain: hardhat, mode: 'hardhat', transport });
  const accounts = await walletClient.getAddresses();
  return {
    rpcUrl,
    port,
    chainId: 31337,
    accounts,
    publicClient,
    walletClient,
    testClient,
    blockNumber: () => publicClient.getBlockNumber({ cacheTime: 0 }),
    snapshot: () => testClient.snapshot() as Promise<Hex>,
    async revert(id) {
      // viem's revert() ignores the answer: evm_revert says false for an unknown (or used) snapshot.
      const reverted = await testClient.request({ method: 'evm_revert', params: [id] } as never);
      if (reverted !== true) throw new Error(`evm_revert ${id} answered ${String(reverted)}`);
    },
    async mine(count = 1) {
      for (let i = 0; i < count; i++) await testClient.request({ method: 'evm_mine', params: [] } as never);
      return publicClient.getBlockNumber({ cacheTime: 0 });
    },
    logs: child.logs,
    stop: () => child.stop(),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The contracts and their actions

export interface Contracts {
  hatchery: { address: Address; abi: typeof hatcheryAbi };
  token: { address: Address; abi: typeof hatchTokenAbi };
  /** The block Ponder starts from: the first contract's deployment. */
  startBlock: bigint;
  /** The token's whole supply, minted to accounts[0] (a Transfer from the zero address) on deployment. */
  tokenSupply: bigint;
  /** The deployment transactions (the token's holds its first Transfer, log index 0). */
  deployments: { token: Hash; hatchery: Hash };
}

export async function deploy(chain: Chain, options: { tokenSupply?: bigint } = {}): Promise<Contracts> {
  const artifacts = await compileContracts();
  const tokenSupply = options.tokenSupply ?? 1_000_000n * 10n ** 18n;
  const admin = chain.accounts[0]!;
  const deployed = async (hash: Hash) => {
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success' || !receipt.contractAddress) throw new Error(`deployment ${hash} failed`);
    return receipt;
  };
  const token = await deployed(
    await chain.walletClient.deployContract({
      abi: hatchTokenAbi,
      bytecode: artifacts.HatchToken.bytecode,
      args: [tokenSupply],
      account: admin,
      chain: hardhat,
    }),
  );
  const hatchery = await deployed(
    await chain.walletClient.deployContract({ abi: hatcheryAbi, bytecode: artifacts.Hatchery.bytecode, account: admin, chain: hardhat }),
  );
  return {
    hatchery: { address: hatchery.contractAddress!, abi: hatcheryAbi },
    token: { address: token.contractAddress!, abi: hatchTokenAbi },
    startBlock: token.blockNumber,
    tokenSupply,
    deployments: { token: token.transactionHash, hatchery: hatchery.transactionHash },
  };
}

/** What an action left on the chain: its mined transaction. */
export interface Tx {
  hash: Hash;
  receipt: TransactionReceipt;
  blockNumber: bigint;
  /** The id the app gives a row one of this transaction's logs creates (`<tx hash>-<log index>`), by event name. */
  logIds: Record<string, string[]>;
}

export interface EditionInput {
  name: string;
  artUri: string;
  health: number;
  skill: number;
  morale: number;
  rarity: number;
  maxSupply: bigint;
  mintStart: bigint;
  mintEnd: bigint;
  price: bigint;
  distribution: number;
}

type HatcheryFunction = Parameters<WalletClient['writeContract']>[0]['functionName'];

/** Typed helpers for every action the app indexes; each waits for its transaction's block (automine: its own). */
export function actions(chain: Chain, contracts: Contracts) {
  const admin = chain.accounts[0]!;

  const send = async (target: 'hatchery' | 'token', from: Address, functionName: string, args: readonly unknown[], value?: bigint): Promise<Tx> => {
    const contract = contracts[target];
    const hash = await chain.walletClient.writeContract({
      address: contract.address,
      abi: contract.abi,
      functionName: functionName as HatcheryFunction,
      args: args as never,
      account: from,
      chain: hardhat,
      ...(value === undefined ? {} : { value }),
    } as never);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`${functionName} ${hash} reverted`);
    const logIds: Record<string, string[]> = {};
    for (const log of parseEventLogs({ abi: contract.abi, logs: receipt.logs })) {
      (logIds[log.eventName] ??= []).push(`${hash}-${log.logIndex}`);
    }
    return { hash, receipt, blockNumber: receipt.blockNumber, logIds };
  };

  /** The first `eventName` log of the hatchery's in a receipt, decoded. */
  const hatcheryEvent = (receipt: TransactionReceipt, eventName: string) => {
    const log = parseEventLogs({ abi: hatcheryAbi, logs: receipt.logs }).find((entry) => entry.eventName === eventName);
    if (!log) throw new Error(`no ${eventName} in ${receipt.transactionHash}`);
    return log.args as Record<string, unknown>;
  };

  return {
    async createEdition(edition: EditionInput) {
      const tx = await send('hatchery', admin, 'createEdition', [edition]);
      return { ...tx, editionId: hatcheryEvent(tx.receipt, 'EditionCreated').editionId as bigint };
    },
    setEditionActive: (editionId: bigint, active: boolean) => send('hatchery', admin, 'setEditionActive', [editionId, active]),
    async mint(to: Address, editionId: bigint, gender: 0 | 1, name: string) {
      const tx = await send('hatchery', admin, 'mint', [to, editionId, gender, name]);
      return { ...tx, tokenId: hatcheryEvent(tx.receipt, 'Minted').tokenId as bigint };
    },
    burn: (owner: Address, tokenId: bigint) => send('hatchery', owner, 'burn', [tokenId]),
    list: (seller: Address, tokenId: bigint, price: bigint) => send('hatchery', seller, 'list', [tokenId, price]),
    cancelListing: (seller: Address, tokenId: bigint) => send('hatchery', seller, 'cancelListing', [tokenId]),
    async buy(buyer: Address, tokenId: bigint) {
      const [, price] = (await chain.publicClient.readContract({
        address: contracts.hatchery.address,
        abi: hatcheryAbi,
        functionName: 'listings',
        args: [tokenId],
      })) as readonly [Address, bigint, boolean];
      const tx = await send('hatchery', buyer, 'buy', [tokenId], price);
      const sold = hatcheryEvent(tx.receipt, 'Sold');
      return { ...tx, price, platformFee: sold.platformFee as bigint, royalty: sold.royalty as bigint };
    },
    async requestForge(buyer: Address, tier: 1 | 2 | 3) {
      const tx = await send('hatchery', buyer, 'requestForge', [tier]);
      return { ...tx, requestId: hatcheryEvent(tx.receipt, 'ForgeRequested').requestId as bigint };
    },
    async fulfilForge(requestId: bigint, editionId: bigint, gender: 0 | 1, name: string) {
      const tx = await send('hatchery', admin, 'fulfilForge', [requestId, editionId, gender, name]);
      return { ...tx, tokenId: hatcheryEvent(tx.receipt, 'ForgeFulfilled').tokenId as bigint };
    },
    cancelForge: (buyer: Address, requestId: bigint) => send('hatchery', buyer, 'cancelForge', [requestId]),
    async stake(staker: Address, maleId: bigint, femaleId: bigint = 0n) {
      const tx = await send('hatchery', staker, 'stake', [maleId, femaleId]);
      const staked = hatcheryEvent(tx.receipt, 'PairStaked');
      return { ...tx, pairId: staked.pairId as bigint, stakedAt: staked.stakedAt as bigint };
    },
    async claimStaking(staker: Address, pairId: bigint) {
      const tx = await send('hatchery', staker, 'claimStaking', [pairId]);
      return { ...tx, claimedAt: hatcheryEvent(tx.receipt, 'PairClaimed').claimedAt as bigint };
    },
    unstake: (staker: Address, pairId: bigint) => send('hatchery', staker, 'unstake', [pairId]),
    registerReferrer: (referrer: Address, code: bigint) => send('hatchery', referrer, 'registerReferrer', [code]),
    linkReferrer: (buyer: Address, code: bigint) => send('hatchery', buyer, 'linkReferrer', [code]),
    async claimReferral(referrer: Address) {
      const tx = await send('hatchery', referrer, 'claimReferral', []);
      return { ...tx, amount: hatcheryEvent(tx.receipt, 'ReferralClaimed').amount as bigint };
    },
    transferToken: (from: Address, to: Address, value: bigint) => send('token', from, 'transfer', [to, value]),
  };
}

export type Actions = ReturnType<typeof actions>;

// ---------------------------------------------------------------------------------------------------------------
// Ponder

export type Layout = 'direct' | 'views';

export interface PonderOptions {
  /** The database Ponder writes (a TCP URL). */
  databaseUrl: string;
  layout: Layout;
  /** direct: the schema Ponder owns and writes (default `indexer`). */
  schema?: string;
  /** views: the schema of Ponder's views, the one readers use (default `indexer`). */
  viewsSchema?: string;
  /** views: the schema Ponder owns and writes (default `ponder_<random>`, as a deployment's would be). */
  deploymentSchema?: string;
  chain: Pick<Chain, 'rpcUrl'>;
  contracts: Contracts;
  /** Ponder's RPC polling interval (its minimum is 100 ms). */
  pollingIntervalMs?: number;
  /** How many times Ponder is given the node's URL (default 4): each is a budget of 20 requests a second at first. */
  rpcCopies?: number;
  /** Ponder's --log-level (default info). */
  logLevel?: 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /** How long startPonder() waits for /ready (default 60 s). */
  timeoutMs?: number;
}

export type PonderMessage = { msg: string; level: number; [key: string]: unknown };

export interface PonderProcess {
  layout: Layout;
  /** The schema holding Ponder's tables, _ponder_meta and _ponder_checkpoint. */
  schema: string;
  /** views: the schema of the views (also of _ponder_meta's and _ponder_checkpoint's). */
  viewsSchema?: string;
  /** The schema readers use: the views schema in the views layout, else the schema. */
  readSchema: string;
  /** Ponder's log lines (pino JSON, and whatever else Node prints), as text. */
  logs(): string[];
  /** The JSON log lines, parsed. */
  messages(): PonderMessage[];
  /** The port of its HTTP server once it is up (Ponder takes the next one when the one asked for is taken). */
  port(): number | undefined;
  readonly process: ChildProcess;
  readonly exited: Child['exited'];
  /** SIGTERM to its process group, SIGKILL after `graceMs` (default 8 s: Ponder gives itself 5 s to shut down), then waits. */
  stop(graceMs?: number): Promise<void>;
}

export interface RunningPonder extends PonderProcess {
  port(): number;
  url: string;
}

/**
 * Spawns `ponder start` (the real CLI, npm `ponder`) on the app in test/stack/ponder/app, and returns at once:
 * direct layout `--schema <schema>`, views layout `--schema <deploymentSchema> --views-schema <viewsSchema>`.
 */
export async function spawnPonder(options: PonderOptions): Promise<PonderProcess> {
  const schema =
    options.layout === 'direct' ? (options.schema ?? 'indexer') : (options.deploymentSchema ?? `ponder_${Math.random().toString(36).slice(2, 10)}`);
  const viewsSchema = options.layout === 'views' ? (options.viewsSchema ?? 'indexer') : undefined;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    PONDER_RPC_URL_31337: options.chain.rpcUrl,
    PONDER_RPC_COPIES: String(options.rpcCopies ?? 4),
    HATCHERY_ADDRESS: options.contracts.hatchery.address,
    HATCH_TOKEN_ADDRESS: options.contracts.token.address,
    HATCHERY_START_BLOCK: String(options.contracts.startBlock),
    PONDER_POLLING_INTERVAL_MS: String(options.pollingIntervalMs ?? 100),
    PONDER_TELEMETRY_DISABLED: 'true',
    NO_COLOR: '1',
  };
  // Each would win over what is passed here.
  for (const name of ['PORT', 'DATABASE_PRIVATE_URL', 'DATABASE_SCHEMA', 'PONDER_LOG_LEVEL']) delete env[name];
  const args = [
    join(packageDir('ponder'), 'dist', 'esm', 'bin', 'ponder.js'),
    '--root',
    appDir,
    '--log-format',
    'json',
    '--log-level',
    options.logLevel ?? 'info',
    'start',
    '--schema',
    schema,
    ...(viewsSchema ? ['--views-schema', viewsSchema] : []),
    '--port',
    String(await freePort()),
    '--hostname',
    '127.0.0.1',
  ];
  const child = spawnGroup(nodeBinary(), args, { cwd: appDir, env, maxLogLines: 5_000 });
  const messages = (): PonderMessage[] =>
    child.logs().flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        const parsed = JSON.parse(line) as { msg?: unknown };
        return typeof parsed.msg === 'string' ? [parsed as PonderMessage] : [];
      } catch {
        return [];
      }
    });
  return {
    layout: options.layout,
    schema,
    viewsSchema,
    readSchema: viewsSchema ?? schema,
    logs: child.logs,
    messages,
    port() {
      const created = messages().find((message) => message.msg === 'Created HTTP server');
      return created && typeof created.port === 'number' ? created.port : undefined;
    },
    process: child.process,
    exited: child.exited,
    stop: (graceMs) => child.stop(graceMs),
  };
}

/**
 * Runs `ponder start` and resolves once its /ready answers 200: the backfill up to the finalized block is done
 * (and, in the views layout, the views exist). Blocks newer than that are indexed live just after:
 * use waitForIndexedBlock() for the chain's head.
 */
export async function startPonder(options: PonderOptions): Promise<RunningPonder> {
  const ponder = await spawnPonder(options);
  const ready = async () => {
    const port = ponder.port();
    if (port === undefined) return false;
    try {
      const response = await fetch(`http://127.0.0.1:${port}/ready`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  };
  await waitUntil('ponder start', ponder, ready, options.timeoutMs ?? 60_000);
  const port = ponder.port()!;
  return { ...ponder, port: () => port, url: `http://127.0.0.1:${port}` };
}

/**
 * Runs `ponder start` until it exits by itself (a start it refuses), `until` matches one of its log messages,
 * or `timeoutMs` passes; then stops it. `matched` is the message `until` matched.
 */
export async function runPonderToExit(
  options: PonderOptions,
  { timeoutMs = 60_000, until }: { timeoutMs?: number; until?: (message: PonderMessage) => boolean } = {},
) {
  const started = Date.now();
  const ponder = await spawnPonder(options);
  let matched: PonderMessage | undefined;
  let exit: Awaited<Child['exited']> | undefined;
  void ponder.exited.then((outcome) => (exit = outcome));
  while (!exit && Date.now() - started < timeoutMs) {
    matched = until ? ponder.messages().find(until) : undefined;
    if (matched) break;
    await sleep(100);
  }
  matched ??= until ? ponder.messages().find(until) : undefined;
  // A Ponder that has failed waits 5 s for its own shutdown before it exits; nothing is left to save.
  await ponder.stop(matched ? 500 : undefined);
  return { exit, matched, ms: Date.now() - started, logs: ponder.logs(), messages: ponder.messages(), schema: ponder.schema };
}

// ---------------------------------------------------------------------------------------------------------------
// Ponder's bookkeeping tables

export interface Checkpoint {
  blockTimestamp: bigint;
  chainId: bigint;
  blockNumber: bigint;
  transactionIndex: bigint;
  eventType: number;
  eventIndex: bigint;
}

/**
 * Ponder's checkpoint string (ponder/src/utils/checkpoint.ts): 75 decimal digits, zero-padded fields
 * [0,10) block timestamp, [10,26) chain id, [26,42) block number, [42,58) transaction index,
 * [58,59) event type, [59,75) event index.
 */
export function decodeCheckpoint(checkpoint: string): Checkpoint {
  if (!/^[0-9]{75}$/.test(checkpoint)) throw new Error(`not a Ponder checkpoint: ${checkpoint}`);
  return {
    blockTimestamp: BigInt(checkpoint.slice(0, 10)),
    chainId: BigInt(checkpoint.slice(10, 26)),
    blockNumber: BigInt(checkpoint.slice(26, 42)),
    transactionIndex: BigInt(checkpoint.slice(42, 58)),
    eventType: Number(checkpoint.slice(58, 59)),
    eventIndex: BigInt(checkpoint.slice(59, 75)),
  };
}

const quote = (identifier: string) => pg.escapeIdentifier(identifier);

/** The latest block Ponder has indexed for chain 31337 (from `<schema>._ponder_checkpoint`), or undefined before its first. */
export async function indexedBlock(client: pg.ClientBase | pg.Pool, schema: string): Promise<bigint | undefined> {
  const { rows } = await client.query<{ latest_checkpoint: string }>(
    `SELECT latest_checkpoint FROM ${quote(schema)}._ponder_checkpoint WHERE chain_id = 31337`,
  );
  return rows[0] ? decodeCheckpoint(rows[0].latest_checkpoint).blockNumber : undefined;
}

/** Waits until Ponder has indexed `block` (its latest checkpoint is at or past it); returns the block it reached. */
export async function waitForIndexedBlock(databaseUrl: string, schema: string, block: bigint, timeoutMs = 30_000): Promise<bigint> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    let reached: bigint | undefined;
    for (;;) {
      reached = await indexedBlock(client, schema).catch(() => undefined);
      if (reached !== undefined && reached >= block) return reached;
      if (Date.now() > deadline) throw new Error(`Ponder indexed up to block ${reached ?? 'none'} in ${timeoutMs} ms, not ${block}`);
      await sleep(50);
    }
  } finally {
    await client.end();
  }
}

/** A NOTIFY received by listen(). */
export interface Notification {
  channel: string;
  payload: string;
  /** Date.now() on arrival. */
  at: number;
}

/** LISTENs on `channels` (e.g. `indexer_live_query`) and keeps what arrives, in order. */
export async function listen(databaseUrl: string, channels: string[]) {
  const client = new pg.Client({ connectionString: databaseUrl });
  const received: Notification[] = [];
  client.on('notification', (message) => received.push({ channel: message.channel, payload: message.payload ?? '', at: Date.now() }));
  // A server that goes away first (a test stopping PostgreSQL) is no error of the test's.
  client.on('error', () => undefined);
  await client.connect();
  for (const channel of channels) await client.query(`LISTEN ${quote(channel)}`);
  return {
    received,
    /** The payloads received on `channel`, parsed (Ponder sends a JSON array of table names). */
    payloads: (channel: string) => received.filter((entry) => entry.channel === channel).map((entry) => JSON.parse(entry.payload) as string[]),
    /** Resolves once `count` notifications have arrived on `channel`; the timeout only ends a wait for ones that never come. */
    async waitFor(channel: string, count: number, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.filter((entry) => entry.channel === channel).length < count) {
        if (Date.now() > deadline) throw new Error(`${received.filter((entry) => entry.channel === channel).length} notifications on ${channel}, not ${count}`);
        await sleep(20);
      }
    },
    close: () => client.end().catch(() => undefined),
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] !== 'write-abis') {
    process.stderr.write('usage: npx tsx test/stack/ponder/chain.ts write-abis\n');
    process.exit(2);
  }
  const result = await compileContracts();
  await writeFile(join(appDir, 'abis.ts'), abisModule(result));
  process.stdout.write(`wrote test/stack/ponder/app/abis.ts (solc ${result.solcVersion}, ${Math.round(result.ms)} ms)\n`);
}
