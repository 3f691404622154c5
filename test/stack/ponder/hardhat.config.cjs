// The Hardhat node the Ponder fixture starts (chain.ts: `hardhat --config test/stack/ponder/hardhat.config.cjs node`).
// Contracts are compiled by solc-js in chain.ts, not by Hardhat (which would download a compiler): no sources here.
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const scratch = join(tmpdir(), 'hatchery-hardhat');

module.exports = {
  paths: {
    sources: join(scratch, 'no-sources'),
    cache: join(scratch, 'cache'),
    artifacts: join(scratch, 'artifacts'),
  },
  networks: {
    hardhat: {
      chainId: 31337,
      // Every transaction in a block of its own, as soon as it is sent; tests mine empty blocks with hardhat_mine.
      mining: { auto: true },
      // The node prints every RPC call otherwise, and Ponder polls several times a second.
      loggingEnabled: false,
    },
  },
};
