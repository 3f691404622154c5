import { createConfig } from 'ponder';
import { hatcheryAbi, hatchTokenAbi } from './abis';

// Everything that changes from run to run comes from the environment that test/stack/ponder/chain.ts startPonder() sets,
// so the app is never edited per run. DATABASE_URL is read by Ponder itself; the schema comes from `--schema`.
function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`test/stack/ponder/app: ${name} is not set (test/stack/ponder/chain.ts startPonder() sets it)`);
  return value;
}

const address = (name: string) => env(name) as `0x${string}`;

export default createConfig({
  database: { kind: 'postgres', connectionString: env('DATABASE_URL'), poolConfig: { max: 8 } },
  chains: {
    hardhat: {
      id: 31337,
      // Ponder limits each RPC URL to 20 requests a second at first (raising it slowly while they succeed), which
      // bursts of test transactions (a block each, Ponder asks 2 or 3 requests a block and polls) exceed: the same
      // local node several times over is as many budgets.
      rpc: Array.from({ length: Number(process.env.PONDER_RPC_COPIES ?? 4) }, () => env('PONDER_RPC_URL_31337')),
      // Ponder's minimum; its default is 1 s.
      pollingInterval: Number(process.env.PONDER_POLLING_INTERVAL_MS ?? 100),
      // Every run is a new chain with the same id: nothing cached from an earlier one may be reused.
      disableCache: true,
    },
  },
  contracts: {
    Hatchery: {
      chain: 'hardhat',
      abi: hatcheryAbi,
      address: address('HATCHERY_ADDRESS'),
      startBlock: Number(env('HATCHERY_START_BLOCK')),
    },
    HatchToken: {
      chain: 'hardhat',
      abi: hatchTokenAbi,
      address: address('HATCH_TOKEN_ADDRESS'),
      startBlock: Number(env('HATCHERY_START_BLOCK')),
    },
  },
});
