import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '@hatchery/local/postgres';
import { hatcheryAbi, hatchTokenAbi } from './app/abis';
import {
  actions,
  compileContracts,
  decodeCheckpoint,
  deploy,
  listen,
  runPonderToExit,
  startChain,
  startPonder,
  waitForIndexedBlock,
  type Actions,
  type Chain,
  type Contracts,
  type EditionInput,
  type Layout,
  type RunningPonder,
  type Tx,
} from './chain';

/**
 * The real Ponder (npm `ponder`, test/stack/ponder/app) indexing a real Hardhat chain into a real PostgreSQL, in both of
 * its layouts: the tables it writes must be the ones Hatchery reads (packages/core/src/indexer/schema.sql), with
 * the chain's state in them, and its NOTIFY, checkpoints and reorg handling must be what Hatchery expects.
 */

const tables = [
  'editions',
  'forge_requests',
  'listings',
  'nfts',
  'referral_bnb_accruals',
  'referral_bnb_claims',
  'referral_links',
  'referral_registrations',
  'sales',
  'staking_pairs',
  'token_transfers',
] as const;
const primaryKeys: Record<(typeof tables)[number], string> = {
  editions: 'edition_id',
  forge_requests: 'request_id',
  listings: 'token_id',
  nfts: 'token_id',
  referral_bnb_accruals: 'id',
  referral_bnb_claims: 'id',
  referral_links: 'buyer',
  referral_registrations: 'referrer',
  sales: 'id',
  staking_pairs: 'pair_id',
  token_transfers: 'id',
};

const ether = 10n ** 18n;
const edition = (name: string, overrides: Partial<EditionInput> = {}): EditionInput => ({
  name,
  artUri: `ipfs://${name.toLowerCase()}`,
  health: 70,
  skill: 55,
  morale: 90,
  rarity: 3,
  maxSupply: 100n,
  mintStart: 1_700_000_000n,
  mintEnd: 1_900_000_000n,
  price: ether / 10n,
  distribution: 2,
  ...overrides,
});

let database: EmbeddedDatabase;
let dataDir: string;

beforeAll(async () => {
  process.env.LOG_LEVEL ??= 'silent';
  dataDir = await mkdtemp(join(tmpdir(), 'hatchery-ponder-'));
  database = await startEmbeddedPostgres({ dataDir, persistent: false, templateDir: inject('postgresTemplateDir') });
});

afterAll(async () => {
  await database?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** A database of its own on the cluster, by TCP (Ponder's pg pools take a plain URL). */
async function freshDatabase(name: string): Promise<string> {
  await database.createDatabase(name);
  return database.tcpUrl.replace(/\/postgres$/, `/${name}`);
}

it('app/abis.ts is what solc makes of contracts/Hatchery.sol (else: npx tsx test/stack/ponder/chain.ts write-abis)', async () => {
  const compiled = await compileContracts();
  expect(compiled.Hatchery.abi).toEqual(hatcheryAbi);
  expect(compiled.HatchToken.abi).toEqual(hatchTokenAbi);
}, 60_000);

describe.each<Layout>(['direct', 'views'])('Ponder, %s layout', (layout) => {
  let chain: Chain;
  let contracts: Contracts;
  let act: Actions;
  let ponder: RunningPonder | undefined;
  let databaseUrl: string;
  let pool: pg.Pool;
  let notifications: Awaited<ReturnType<typeof listen>>;
  let readyAt = 0;
  let finalizedAtStart = 0n;
  const deploymentSchema = `ponder_${layout}_deployment`;
  /** The channels Ponder NOTIFYs on: the schema readers use, and in the views layout its own schema too. */
  const channels = layout === 'direct' ? ['indexer_live_query'] : ['indexer_live_query', `${deploymentSchema}_live_query`];

  const sql = async <Row extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]) => (await pool.query<Row>(text, values)).rows;
  const rows = (table: (typeof tables)[number]) => sql(`SELECT * FROM indexer.${table} ORDER BY ${primaryKeys[table]}`);
  const lower = (address: string) => address.toLowerCase();

  // Accounts: 0 deploys and administers, 1 alice, 2 bob, 3 carol.
  const who = () => {
    const [admin, alice, bob, carol] = chain.accounts as [`0x${string}`, `0x${string}`, `0x${string}`, `0x${string}`];
    return { admin, alice, bob, carol };
  };

  beforeAll(async () => {
    databaseUrl = await freshDatabase(`ponder_${layout}`);
    pool = new pg.Pool({ connectionString: databaseUrl, max: 3 });
    pool.on('error', () => undefined);
    chain = await startChain();
    contracts = await deploy(chain);
    act = actions(chain, contracts);
  });

  afterAll(async () => {
    await ponder?.stop();
    await notifications?.close();
    await chain?.stop();
    await pool?.end();
  });

  // What happened before Ponder started: far enough back (Ponder's finality for chain 31337 is 30 blocks) for
  // its backfill to index it, rather than its live sync.
  const before = {} as { edition: bigint; rex: bigint; ada: bigint; seed: Awaited<ReturnType<Actions['transferToken']>> };

  it('backfills what was on the chain before it started, then answers /ready', async () => {
    const { alice, admin, bob } = who();
    before.edition = (await act.createEdition(edition('Genesis'))).editionId;
    before.rex = (await act.mint(alice, before.edition, 0, 'Rex')).tokenId;
    before.ada = (await act.mint(alice, before.edition, 1, 'Ada')).tokenId;
    before.seed = await act.transferToken(admin, bob, 1_000n);
    await chain.mine(35);

    notifications = await listen(databaseUrl, channels);
    const started = Date.now();
    ponder = await startPonder({
      databaseUrl,
      layout,
      ...(layout === 'views' ? { viewsSchema: 'indexer', deploymentSchema } : { schema: 'indexer' }),
      chain,
      contracts,
    });
    readyAt = Date.now();
    const head = await chain.blockNumber();
    await waitForIndexedBlock(databaseUrl, ponder.schema, head);
    console.log(`${layout}: ponder ready in ${readyAt - started} ms, at the head (${head}) ${Date.now() - readyAt} ms later`);

    const live = ponder.messages().find((message) => message.msg === 'Started live indexing');
    finalizedAtStart = BigInt(live?.finalized_block as number);
    expect(finalizedAtStart).toBe(head - 30n);
    const backfilled = ponder.messages().filter((message) => message.msg === 'Indexed block range');
    expect(backfilled.reduce((sum, message) => sum + Number(message.event_count), 0)).toBeGreaterThan(0);

    // Nothing is notified for the backfill; each block indexed live is, once per channel. Counted, not timed: Ponder
    // may index the live blocks before a poll of /ready sees it answer.
    for (const channel of channels) {
      await notifications.waitFor(channel, Number(head - finalizedAtStart));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(notifications.payloads(channel)).toHaveLength(Number(head - finalizedAtStart));
    }
  }, 90_000);

  it('keeps its bookkeeping where readers find it', async () => {
    const { schema } = ponder!;
    const kinds = await sql<{ table_schema: string; table_name: string; table_type: string }>(
      `SELECT table_schema, table_name, table_type FROM information_schema.tables
       WHERE table_name IN ('_ponder_meta', '_ponder_checkpoint') ORDER BY table_schema, table_name`,
    );
    const expected = [
      { table_schema: schema, table_name: '_ponder_checkpoint', table_type: 'BASE TABLE' },
      { table_schema: schema, table_name: '_ponder_meta', table_type: 'BASE TABLE' },
    ];
    if (layout === 'views') {
      expected.unshift(
        { table_schema: 'indexer', table_name: '_ponder_checkpoint', table_type: 'VIEW' },
        { table_schema: 'indexer', table_name: '_ponder_meta', table_type: 'VIEW' },
      );
    }
    expect(kinds).toEqual(expected);

    const [meta] = await sql<{ key: string; value: Record<string, unknown> }>('SELECT key, value FROM indexer._ponder_meta');
    expect(meta).toMatchObject({ key: 'app', value: { is_ready: 1, is_dev: 0, version: '6', table_names: expect.arrayContaining([...tables]) } });

    const [checkpoint] = await sql<Record<string, string>>('SELECT * FROM indexer._ponder_checkpoint');
    expect(Object.keys(checkpoint!).sort()).toEqual(['chain_id', 'chain_name', 'finalized_checkpoint', 'latest_checkpoint', 'safe_checkpoint']);
    expect(checkpoint).toMatchObject({ chain_name: 'hardhat', chain_id: '31337' });
    const latest = decodeCheckpoint(checkpoint!.latest_checkpoint!);
    const block = await chain.publicClient.getBlock({ blockNumber: latest.blockNumber });
    expect(latest).toEqual({
      blockTimestamp: block.timestamp,
      chainId: 31337n,
      blockNumber: block.number,
      transactionIndex: 9_999_999_999_999_999n,
      eventType: 9,
      eventIndex: 9_999_999_999_999_999n,
    });
    expect(decodeCheckpoint(checkpoint!.finalized_checkpoint!).blockNumber).toBe(finalizedAtStart);
  });

  it('creates the tables, columns and indexes of packages/core/src/indexer/schema.sql', async () => {
    const ddl = await readFile(fileURLToPath(new URL('../../../packages/core/src/indexer/schema.sql', import.meta.url)), 'utf8');
    await pool.query(
      ddl.replaceAll('indexer.', 'ddl_reference.').replace('CREATE SCHEMA IF NOT EXISTS indexer;', 'CREATE SCHEMA IF NOT EXISTS ddl_reference;'),
    );
    const columns = (schema: string, withNullability: boolean) =>
      sql(
        `SELECT table_name, column_name, data_type, numeric_precision, numeric_scale${withNullability ? ', is_nullable' : ''}
         FROM information_schema.columns WHERE table_schema = $1 AND table_name = ANY($2) ORDER BY table_name, column_name`,
        [schema, tables],
      );
    const indexes = (schema: string) =>
      sql(
        `SELECT tablename, indexname, replace(indexdef, $1 || '.', 'S.') AS indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = ANY($2) ORDER BY indexname`,
        [schema, tables],
      );
    const reference = await columns('ddl_reference', true);
    expect(reference.length).toBeGreaterThan(50);
    // Ponder's own tables (in the views layout, its deployment schema's) are exactly those of schema.sql...
    expect(await columns(ponder!.schema, true)).toEqual(reference);
    expect(await indexes(ponder!.schema)).toEqual(await indexes('ddl_reference'));
    // ...and the views readers use have the same columns (a view's are all nullable).
    if (layout === 'views') expect(await columns('indexer', false)).toEqual(await columns('ddl_reference', false));
    await pool.query('DROP SCHEMA ddl_reference CASCADE');
  });

  type Done = Tx & Partial<Record<'editionId' | 'tokenId' | 'requestId' | 'pairId' | 'stakedAt' | 'claimedAt' | 'amount' | 'price', bigint>>;
  const live: Record<string, Done> = {};

  it('indexes every action live into rows equal to the chain state, and NOTIFYs the tables of each block', async () => {
    const { admin, alice, bob, carol } = who();
    const seen = notifications.payloads(channels[0]!).length;
    const steps: Array<[string, () => Promise<Done>, string[]]> = [
      ['edition', () => act.createEdition(edition('Second', { rarity: 5 })), ['editions']],
      ['deactivate', async () => act.setEditionActive(live.edition!.editionId!, false), ['editions']],
      ['mintBo', () => act.mint(bob, before.edition, 0, 'Bo'), ['editions', 'nfts']],
      ['register', () => act.registerReferrer(carol, 777n), ['referral_registrations']],
      ['link', () => act.linkReferrer(bob, 777n), ['referral_links']],
      ['listRex', () => act.list(alice, before.rex, ether), ['listings']],
      ['cancelRex', () => act.cancelListing(alice, before.rex), ['listings']],
      ['listAda', () => act.list(alice, before.ada, 2n * ether), ['listings']],
      ['buyAda', () => act.buy(bob, before.ada), ['listings', 'nfts', 'referral_bnb_accruals', 'sales']],
      ['claimReferral', () => act.claimReferral(carol), ['referral_bnb_claims']],
      ['request', () => act.requestForge(bob, 2), ['forge_requests']],
      ['fulfil', () => act.fulfilForge(live.request!.requestId!, before.edition, 1, 'Forged'), ['editions', 'forge_requests', 'nfts']],
      ['requestAgain', () => act.requestForge(alice, 1), ['forge_requests']],
      ['cancelRequest', () => act.cancelForge(alice, live.requestAgain!.requestId!), ['forge_requests']],
      ['stakePair', () => act.stake(bob, live.mintBo!.tokenId!, before.ada), ['nfts', 'staking_pairs']],
      ['claimStaking', () => act.claimStaking(bob, live.stakePair!.pairId!), ['staking_pairs']],
      ['stakeAlone', () => act.stake(alice, before.rex), ['nfts', 'staking_pairs']],
      ['unstake', () => act.unstake(alice, live.stakeAlone!.pairId!), ['nfts', 'staking_pairs']],
      ['burn', () => act.burn(bob, live.fulfil!.tokenId!), ['nfts']],
      ['transfer', () => act.transferToken(bob, carol, 400n), ['token_transfers']],
    ];
    for (const [name, step] of steps) live[name] = await step();
    const emptyBlock = await chain.mine(1);
    const started = Date.now();
    await waitForIndexedBlock(databaseUrl, ponder!.schema, emptyBlock);
    console.log(`${layout}: ${steps.length} transactions and an empty block indexed ${Date.now() - started} ms after the last`);

    // One NOTIFY per block, naming the tables the block changed (sorted), `[]` for a block that changed none.
    const expectedPayloads = [...steps.map(([, , payload]) => payload), []];
    for (const channel of channels) {
      await notifications.waitFor(channel, seen + expectedPayloads.length);
      expect(notifications.payloads(channel).slice(seen)).toEqual(expectedPayloads);
    }

    const block = (name: string) => String(live[name]!.blockNumber);
    const logId = (name: string, event: string) => live[name]!.logIds[event]![0]!;
    const [rex, ada, bo, forged] = [before.rex, before.ada, live.mintBo!.tokenId!, live.fulfil!.tokenId!];
    const fee = (2n * ether * 250n) / 10_000n;
    const referral = (fee * 2_000n) / 10_000n;

    expect(await rows('editions')).toEqual([
      {
        edition_id: String(before.edition),
        name: 'Genesis',
        art_uri: 'ipfs://genesis',
        health: 70,
        skill: 55,
        morale: 90,
        rarity: 3,
        max_supply: '100',
        minted: '4',
        mint_start: '1700000000',
        mint_end: '1900000000',
        price: String(ether / 10n),
        distribution: 2,
        active: true,
      },
      {
        edition_id: String(live.edition!.editionId),
        name: 'Second',
        art_uri: 'ipfs://second',
        health: 70,
        skill: 55,
        morale: 90,
        rarity: 5,
        max_supply: '100',
        minted: '0',
        mint_start: '1700000000',
        mint_end: '1900000000',
        price: String(ether / 10n),
        distribution: 2,
        active: false,
      },
    ]);
    expect(await rows('nfts')).toEqual([
      { token_id: String(rex), owner: lower(alice), edition_id: String(before.edition), gender: 0, nft_name: 'Rex', staked: false, burned: false },
      { token_id: String(ada), owner: lower(bob), edition_id: String(before.edition), gender: 1, nft_name: 'Ada', staked: true, burned: false },
      { token_id: String(bo), owner: lower(bob), edition_id: String(before.edition), gender: 0, nft_name: 'Bo', staked: true, burned: false },
      { token_id: String(forged), owner: lower(bob), edition_id: String(before.edition), gender: 1, nft_name: 'Forged', staked: false, burned: true },
    ]);
    expect(await rows('listings')).toEqual([
      {
        token_id: String(rex),
        seller: lower(alice),
        price: String(ether),
        status: 'Cancelled',
        edition_id: String(before.edition),
        listed_at_block: block('listRex'),
        updated_at_block: block('cancelRex'),
        tx_hash: live.listRex!.hash,
      },
      {
        token_id: String(ada),
        seller: lower(alice),
        price: String(2n * ether),
        status: 'Sold',
        edition_id: String(before.edition),
        listed_at_block: block('listAda'),
        updated_at_block: block('buyAda'),
        tx_hash: live.listAda!.hash,
      },
    ]);
    expect(await rows('sales')).toEqual([
      {
        id: logId('buyAda', 'Sold'),
        token_id: String(ada),
        seller: lower(alice),
        buyer: lower(bob),
        price: String(2n * ether),
        platform_fee: String(fee),
        royalty: String((2n * ether * 500n) / 10_000n),
        block_number: block('buyAda'),
      },
    ]);
    expect(await rows('forge_requests')).toEqual([
      {
        request_id: String(live.request!.requestId),
        buyer: lower(bob),
        tier: 2,
        status: 'Fulfilled',
        token_id: String(forged),
        edition_id: String(before.edition),
        block_number: block('request'),
        fulfilled_at_block: block('fulfil'),
      },
      {
        request_id: String(live.requestAgain!.requestId),
        buyer: lower(alice),
        tier: 1,
        status: 'Cancelled',
        token_id: null,
        edition_id: null,
        block_number: block('requestAgain'),
        fulfilled_at_block: null,
      },
    ]);
    expect(await rows('staking_pairs')).toEqual([
      {
        pair_id: String(live.stakePair!.pairId),
        staker: lower(bob),
        male_id: String(bo),
        female_id: String(ada),
        matched: true,
        staked_at: String(live.stakePair!.stakedAt),
        last_claim_at: String(live.claimStaking!.claimedAt),
        status: 'Staked',
      },
      {
        pair_id: String(live.stakeAlone!.pairId),
        staker: lower(alice),
        male_id: String(rex),
        female_id: '0',
        matched: false,
        staked_at: String(live.stakeAlone!.stakedAt),
        last_claim_at: String(live.stakeAlone!.stakedAt),
        status: 'Unstaked',
      },
    ]);
    expect(await rows('referral_registrations')).toEqual([{ referrer: lower(carol), code: '777', block_number: block('register') }]);
    expect(await rows('referral_links')).toEqual([{ buyer: lower(bob), referrer: lower(carol), block_number: block('link') }]);
    expect(await rows('referral_bnb_accruals')).toEqual([
      { id: logId('buyAda', 'ReferralAccrued'), referrer: lower(carol), buyer: lower(bob), amount: String(referral), block_number: block('buyAda') },
    ]);
    expect(await rows('referral_bnb_claims')).toEqual([
      { id: logId('claimReferral', 'ReferralClaimed'), referrer: lower(carol), amount: String(referral), block_number: block('claimReferral') },
    ]);
    const transfers = [
      {
        id: `${contracts.deployments.token}-0`,
        from_addr: `0x${'0'.repeat(40)}`,
        to_addr: lower(admin),
        value: String(contracts.tokenSupply),
        block_number: String(contracts.startBlock),
      },
      { id: before.seed.logIds.Transfer![0]!, from_addr: lower(admin), to_addr: lower(bob), value: '1000', block_number: String(before.seed.blockNumber) },
      { id: logId('transfer', 'Transfer'), from_addr: lower(bob), to_addr: lower(carol), value: '400', block_number: block('transfer') },
    ];
    const byId = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.id).localeCompare(String(b.id));
    expect((await rows('token_transfers')).sort(byId)).toEqual(transfers.sort(byId));

    // The same state, read from the contracts.
    const read = <T>(functionName: string, args: unknown[], contract: 'hatchery' | 'token' = 'hatchery') =>
      chain.publicClient.readContract({ address: contracts[contract].address, abi: contracts[contract].abi, functionName, args } as never) as Promise<T>;
    for (const nft of await rows('nfts')) {
      const owner = await read<string>('ownerOf', [BigInt(nft.token_id as string)]);
      expect(nft.burned ? `0x${'0'.repeat(40)}` : nft.owner).toBe(lower(owner));
      expect(nft.staked).toBe(await read<boolean>('stakedToken', [BigInt(nft.token_id as string)]));
    }
    for (const row of await rows('editions')) expect(row.minted).toBe(String(await read<bigint>('minted', [BigInt(row.edition_id as string)])));
    for (const row of await rows('listings')) {
      const [seller, price, active] = await read<[string, bigint, boolean]>('listings', [BigInt(row.token_id as string)]);
      expect([row.seller, row.price, row.status === 'Active']).toEqual([lower(seller), String(price), active]);
    }
    const balances = new Map<string, bigint>();
    for (const row of await rows('token_transfers')) {
      balances.set(row.from_addr as string, (balances.get(row.from_addr as string) ?? 0n) - BigInt(row.value as string));
      balances.set(row.to_addr as string, (balances.get(row.to_addr as string) ?? 0n) + BigInt(row.value as string));
    }
    for (const account of [admin, bob, carol]) expect(balances.get(lower(account))).toBe(await read<bigint>('balanceOf', [account], 'token'));
    expect(await read<bigint>('referralBalance', [carol])).toBe(0n);
  }, 60_000);

  it('reverts the rows of blocks a reorganisation removed, without naming their tables in a NOTIFY', async () => {
    const { admin, alice } = who();
    const seen = notifications.payloads(channels[0]!).length;
    const snapshot = await chain.snapshot();
    const minted = await act.mint(alice, before.edition, 0, 'Doomed');
    const listed = await act.list(alice, minted.tokenId, ether);
    await waitForIndexedBlock(databaseUrl, ponder!.schema, listed.blockNumber);
    expect(await sql('SELECT status FROM indexer.listings WHERE token_id = $1', [String(minted.tokenId)])).toEqual([{ status: 'Active' }]);

    // The same heights again, holding other transactions: Ponder sees the new head's parent differ from its own block.
    await chain.revert(snapshot);
    const replaced = await act.transferToken(admin, alice, 5n);
    const head = await chain.mine(1);
    expect([replaced.blockNumber, head]).toEqual([minted.blockNumber, listed.blockNumber]);
    const started = Date.now();
    while ((await sql('SELECT 1 FROM indexer.listings WHERE token_id = $1', [String(minted.tokenId)])).length > 0) {
      if (Date.now() - started > 15_000) throw new Error('the reorganised listing is still there');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    console.log(`${layout}: reorganised rows reverted ${Date.now() - started} ms after the new head was mined`);

    // Two blocks indexed, two reorganised away, two indexed again: the revert itself notifies nothing, so the
    // `listings` and `nfts` it changed appear in no payload after it. (Nor does _ponder_checkpoint go back: its
    // latest block stays the old head's number until the new head is indexed, so wait for the NOTIFYs here.)
    // A block may also be notified `[]` (under load, the views layout's deployment sometimes sends one more): what counts is
    // which tables are named.
    for (const channel of channels) {
      await notifications.waitFor(channel, seen + 4);
      const named = () =>
        notifications
          .payloads(channel)
          .slice(seen)
          .filter((payload) => payload.length > 0);
      for (let waited = 0; !named().some((payload) => payload.includes('token_transfers')) && waited < 10_000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(named()).toEqual([['editions', 'nfts'], ['listings'], ['token_transfers']]);
    }
    expect(await sql('SELECT * FROM indexer.nfts WHERE token_id = $1', [String(minted.tokenId)])).toEqual([]);
    expect(await sql('SELECT id FROM indexer.token_transfers WHERE id = $1', [replaced.logIds.Transfer![0]])).toHaveLength(1);
    // Ponder logs the reorg after its transaction commits, so the line can come after the rows are gone.
    await expect.poll(() => ponder!.messages().filter((message) => message.msg === 'Reorged block').length, { timeout: 10_000 }).toBe(1);
  }, 60_000);

  it('finalizes 30 blocks behind the head in steps of 30, pruning its reorg log, without a NOTIFY of its own', async () => {
    const seen = notifications.payloads(channels[0]!).length;
    const schema = pg.escapeIdentifier(ponder!.schema);
    const checkpoints = async () => (await sql<Record<string, string>>(`SELECT * FROM ${schema}._ponder_checkpoint`))[0]!;
    const logged = async () =>
      (await sql<{ n: number }>(tables.map((table) => `SELECT count(*)::int AS n FROM ${schema}._reorg__${table}`).join(' UNION ALL '))).reduce(
        (sum, row) => sum + row.n,
        0,
      );
    // Every live write so far is still in Ponder's reorg log (blocks after the finalized one can still be reverted).
    expect(await logged()).toBeGreaterThan(20);
    // Ponder moves its finalized block once a new block is 2 × 30 past it, to that block - 30: two steps here.
    const from = await chain.blockNumber();
    const head = await chain.mine(Number(finalizedAtStart + 90n - from));
    await waitForIndexedBlock(databaseUrl, ponder!.schema, head);
    await expect.poll(async () => decodeCheckpoint((await checkpoints()).finalized_checkpoint!).blockNumber, { timeout: 10_000 }).toBe(head - 30n);
    // All the live writes were at or before the new finalized block: the log is empty, and safe_checkpoint is the
    // (end of block) checkpoint of the newest block whose writes it pruned, not the finalized block's.
    expect(await logged()).toBe(0);
    const safe = decodeCheckpoint((await checkpoints()).safe_checkpoint!);
    expect(safe.blockNumber).toBeGreaterThan(finalizedAtStart);
    expect(safe.blockNumber).toBeLessThanOrEqual(head - 30n);
    expect(safe.blockNumber).toBeLessThan(head - 30n);
    expect([safe.transactionIndex, safe.eventType, safe.eventIndex]).toEqual([9_999_999_999_999_999n, 9, 9_999_999_999_999_999n]);
    // At least one `[]` per mined block (the views layout sometimes sends one more under load), and nothing named:
    // finalizing notifies nothing.
    for (const channel of channels) {
      await notifications.waitFor(channel, seen + Number(head - from));
      const payloads = notifications.payloads(channel).slice(seen);
      expect(payloads.filter((payload) => payload.length > 0)).toEqual([]);
      expect(payloads.length).toBeGreaterThanOrEqual(Number(head - from));
    }
  }, 60_000);

  it(`refuses to start when the schema it would use already holds a plain table (${layout})`, async () => {
    const url = await freshDatabase(`ponder_${layout}_plain`);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE SCHEMA indexer; CREATE TABLE indexer.listings (token_id numeric(78,0) PRIMARY KEY)');
    await client.end();
    const refusal =
      layout === 'direct'
        ? (message: { msg: string; error?: unknown }) => message.msg === 'uncaughtException' && (message.error as { name?: string }).name === 'MigrationError'
        : (message: { msg: string; error?: unknown; query?: unknown }) =>
            message.query === 'create_views' && (message.error as { message?: string }).message === '"listings" is not a view';
    const result = await runPonderToExit(
      {
        databaseUrl: url,
        layout,
        ...(layout === 'views' ? { viewsSchema: 'indexer', deploymentSchema: 'ponder_plain' } : { schema: 'indexer' }),
        chain,
        contracts,
      },
      { timeoutMs: 45_000, until: refusal },
    );
    expect(result.matched, result.logs.slice(-20).join('\n')).toBeDefined();
    if (layout === 'direct') {
      expect((result.matched!.error as { message: string }).message).toBe(
        "Unable to create table 'indexer'.'listings' because a table with that name already exists.",
      );
    }
  }, 60_000);
});
