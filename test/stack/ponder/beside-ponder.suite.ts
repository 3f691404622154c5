import { loadavg } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Address } from 'viem';
import { createClient, indexedBlocks } from '../../../packages/client/src/index';
import { connectHub, record, sleep, waitFor, type Hub } from '../realtime/support';
import { hatcheryAbi, hatchTokenAbi } from './app/abis';
import { besidePonder, type BesidePonder } from './beside-ponder';
import { decodeCheckpoint, spawnPonder, type Layout } from './chain';
import { webhookReceiver, type DeliveredEvent, type Delivery, type WebhookReceiver } from './receiver';
import { slackMs, slowestOf, timed } from '../../support/pace';
import { freshnessCacheMs } from '@hatchery/core/indexer/freshness';
import { minBlockLimits } from '@hatchery/core/indexer/min-block';

type MarketChanged = { count: number; maxBlock: string; version: number };
type Chains = { chainId: number; block: string; lagSeconds: number; ready: boolean }[];
type Health = { indexer: 'unknown' | { chains: Chains } };
type Page<T> = { items: T[]; totalCount: number };

const ether = 10n ** 18n;
const zeroAddress = '0x0000000000000000000000000000000000000000';
const lower = (address: Address) => address.toLowerCase();
const edition = (name: string, rarity: number) => ({
  name,
  artUri: `ipfs://hatchery/${name}.png`,
  health: 10 + rarity,
  skill: 20 + rarity,
  morale: 30 + rarity,
  rarity,
  maxSupply: 1000n,
  mintStart: 1n,
  mintEnd: 2n ** 64n,
  price: 5n * ether,
  distribution: rarity % 3,
});

/**
 * Hatchery beside the real indexer, on one layout: started first beside a
 * real Ponder on a real chain, it serves the chain's state on every endpoint,
 * pushes its events over the stock SignalR client, tells how fresh its data
 * is, reads only what each block names, keeps a client that follows
 * docs/realtime.md right through a reorg, and delivers the event log's events
 * to webhook endpoints at `latest` and at `finalized`.
 */
export function besidePonderSuite(layout: Layout) {
  let setup: BesidePonder;
  let hub: Hub;
  let market: MarketChanged[];
  /** Two endpoints of the same types, one at each end of finality; each delivery notes Ponder's finalized block when it came. */
  let webhooks: Record<'latest' | 'finalized', WebhookReceiver<bigint | undefined>>;
  const figures: string[] = [];

  beforeAll(async () => {
    // Undefined until Hatchery and Ponder are up (no event comes before).
    const finalizedNow = () =>
      setup === undefined
        ? Promise.resolve(undefined)
        : checkpoints().then(
            ({ finalized }) => finalized,
            () => undefined,
          );
    webhooks = { latest: await webhookReceiver(finalizedNow), finalized: await webhookReceiver(finalizedNow) };
    const endpoints = Object.entries(webhooks).map(([finality, receiver]) => ({
      name: finality,
      url: receiver.url,
      types: ['forge.fulfilled', 'sale.completed', 'listing.opened', 'listing.closed', 'nft.transferred'],
      finality,
      secrets: [receiver.secret],
    }));
    setup = await besidePonder(layout, { hatcheryEnv: { WEBHOOK_ENDPOINTS: JSON.stringify(endpoints) } });
    hub = await connectHub(setup.hatchery.url);
    market = record<MarketChanged>(hub, 'marketChanged');
  }, 240_000);

  afterAll(async () => {
    await hub?.stop();
    await setup?.stop();
    await Promise.all(Object.values(webhooks ?? {}).map((receiver) => receiver.close()));
    if (figures.length) console.log(`${layout} layout:\n  ${figures.join('\n  ')}`);
  }, 60_000);

  const who = () => {
    const [admin, alice, bob, carol, dave] = setup.chain.accounts as [Address, Address, Address, Address, Address];
    return { admin, alice, bob, carol, dave };
  };
  /** Ponder's latest, safe and finalized blocks, from its _ponder_checkpoint. */
  const checkpoints = async () => {
    const [row] = await setup.sql<{ latest_checkpoint: string; safe_checkpoint: string; finalized_checkpoint: string }>(
      `SELECT latest_checkpoint, safe_checkpoint, finalized_checkpoint FROM ${setup.ponder.readSchema}._ponder_checkpoint WHERE chain_id = 31337`,
    );
    return {
      latest: decodeCheckpoint(row!.latest_checkpoint).blockNumber,
      safe: decodeCheckpoint(row!.safe_checkpoint).blockNumber,
      finalized: decodeCheckpoint(row!.finalized_checkpoint).blockNumber,
    };
  };
  const read = <T>(functionName: string, args: readonly unknown[], contract: 'hatchery' | 'token' = 'hatchery') =>
    setup.chain.publicClient.readContract({
      address: setup.contracts[contract].address,
      abi: contract === 'hatchery' ? hatcheryAbi : hatchTokenAbi,
      functionName: functionName as never,
      args: args as never,
    }) as Promise<T>;

  it('leaves the indexer’s schema to Ponder when started first on a database it was given, and Ponder goes live there', async () => {
    expect(setup.schemaBeforePonder).toBe(false);
    // Started first on a database it was given, the stack writes no demo data: the indexer's schema waits for Ponder.
    expect(setup.banner).toContain('absent, until the indexer creates it');
    const [relation] = await setup.sql<{ kind: string }>(`SELECT relkind::text AS kind FROM pg_class WHERE oid = to_regclass('indexer.listings')`);
    // Ponder's own table in the direct layout, its view of the deployment's in the views layout.
    expect(relation?.kind).toBe(layout === 'views' ? 'v' : 'r');
    const health = await setup.hatchery.json<{ indexer: { chains: { chainId: number; ready: boolean }[] } }>('/health');
    expect(health.indexer.chains).toEqual([expect.objectContaining({ chainId: 31337, ready: true })]);
  });

  it('serves the chain’s state on every endpoint', async () => {
    const { admin, alice, bob, carol, dave } = who();
    const { act } = setup;
    const common = await act.createEdition(edition('Common', 1));
    const rare = await act.createEdition(edition('Rare', 4));
    const alpha = await act.mint(alice, common.editionId, 0, 'Alpha');
    const beta = await act.mint(alice, rare.editionId, 1, 'Beta');
    const gamma = await act.mint(bob, common.editionId, 1, 'Gamma');
    const delta = await act.mint(bob, rare.editionId, 0, 'Delta');
    await act.list(alice, alpha.tokenId, 1n * ether);
    await act.list(alice, beta.tokenId, 2n * ether);
    await act.list(bob, gamma.tokenId, 3n * ether);
    await act.cancelListing(alice, beta.tokenId);
    await act.registerReferrer(dave, 77n);
    await act.linkReferrer(carol, 77n);
    const sale = await act.buy(carol, gamma.tokenId);
    const fulfilled = await act.requestForge(carol, 2);
    const forged = await act.fulfilForge(fulfilled.requestId, rare.editionId, 1, 'Forged');
    const open = await act.requestForge(carol, 1);
    const pair = await act.stake(bob, delta.tokenId);
    const transfer = await act.transferToken(admin, alice, 5n * ether);
    await setup.indexed(transfer.blockNumber);
    const { hatchery } = setup;

    const editions = await hatchery.json<Page<Record<string, unknown>>>('/editions');
    expect(editions.items.map(({ id, name, rarity, active, minted, price }) => ({ id, name, rarity, active, minted, price }))).toEqual([
      {
        id: String(common.editionId),
        name: 'Common',
        rarity: 1,
        active: true,
        minted: String(await read<bigint>('minted', [common.editionId])),
        price: String(5n * ether),
      },
      {
        id: String(rare.editionId),
        name: 'Rare',
        rarity: 4,
        active: true,
        minted: String(await read<bigint>('minted', [rare.editionId])),
        price: String(5n * ether),
      },
    ]);

    const listings = await hatchery.json<Page<Record<string, unknown>>>('/marketplace/listings');
    expect(listings).toMatchObject({
      totalCount: 1,
      items: [
        {
          tokenId: String(alpha.tokenId),
          seller: lower(alice),
          price: String(ether),
          status: 'Active',
          editionId: String(common.editionId),
          editionName: 'Common',
          rarity: 1,
          gender: 0,
          nftName: 'Alpha',
        },
      ],
    });
    const [seller, price, active] = await read<[Address, bigint, boolean]>('listings', [alpha.tokenId]);
    expect([lower(seller), String(price), active]).toEqual([lower(alice), String(ether), true]);

    const tokensOf = async (owner: Address) => (await hatchery.json<Page<{ tokenId: string; staked: boolean }>>(`/accounts/${owner}/nfts`)).items;
    expect(await tokensOf(alice)).toEqual([
      expect.objectContaining({ tokenId: String(beta.tokenId), nftName: 'Beta' }),
      expect.objectContaining({ tokenId: String(alpha.tokenId) }),
    ]);
    expect(await tokensOf(bob)).toEqual([expect.objectContaining({ tokenId: String(delta.tokenId), staked: true })]);
    expect((await tokensOf(carol)).map((nft) => nft.tokenId)).toEqual([String(forged.tokenId), String(gamma.tokenId)]);
    for (const owner of [alice, bob, carol]) {
      for (const nft of await tokensOf(owner)) expect(lower(await read<Address>('ownerOf', [BigInt(nft.tokenId)]))).toBe(lower(owner));
    }

    expect((await hatchery.json<Page<unknown>>(`/accounts/${carol}/forge-requests`)).items).toEqual([
      { requestId: String(open.requestId), tier: 1, status: 'Requested', blockNumber: String(open.blockNumber) },
      {
        requestId: String(fulfilled.requestId),
        tier: 2,
        status: 'Fulfilled',
        tokenId: String(forged.tokenId),
        editionId: String(rare.editionId),
        blockNumber: String(fulfilled.blockNumber),
      },
    ]);
    expect((await hatchery.json<Page<unknown>>('/transparency/sales')).items).toEqual([
      {
        tokenId: String(gamma.tokenId),
        seller: lower(bob),
        buyer: lower(carol),
        price: String(3n * ether),
        platformFee: String(sale.platformFee),
        royalty: String(sale.royalty),
        blockNumber: String(sale.blockNumber),
      },
    ]);
    expect((await hatchery.json<Page<unknown>>(`/accounts/${bob}/staking`)).items).toEqual([
      {
        pairId: String(pair.pairId),
        maleId: String(delta.tokenId),
        femaleId: '0',
        matched: false,
        stakedAt: String(pair.stakedAt),
        lastClaimAt: String(pair.stakedAt),
        status: 'Staked',
      },
    ]);
    const accrued = await read<bigint>('referralBalance', [dave]);
    expect(accrued).toBeGreaterThan(0n);
    expect(await hatchery.json(`/accounts/${dave}/referral`)).toEqual({
      code: '77',
      referralCount: 1,
      pending: String(accrued),
      totalAccrued: String(accrued),
      totalClaimed: '0',
    });
    expect(await hatchery.json(`/accounts/${carol}/referral`)).toEqual({
      upline: lower(dave),
      referralCount: 0,
      pending: '0',
      totalAccrued: '0',
      totalClaimed: '0',
    });
    // The summary is shared for seconds; minBlock asks for totals summed at or after the last block written (read your own writes).
    const head = await setup.chain.publicClient.getBlockNumber();
    expect(await hatchery.json(`/transparency/summary?minBlock=${head}`)).toEqual({
      salesCount: 1,
      totalVolume: String(3n * ether),
      nftCount: 5,
      editionCount: 2,
      // The supply minted to the admin on deployment is a Transfer too.
      totalTokenTransferred: String(setup.contracts.tokenSupply + 5n * ether),
    });
  }, 120_000);

  it('pushes forgeFulfilled and marketChanged to the stock SignalR client a moment after their block', async () => {
    const { alice, carol } = who();
    await hub.invoke('Subscribe', carol);
    const forge = record<{ requestId: string; tokenId?: string; editionId?: string }>(hub, 'forgeFulfilled');
    const request = await setup.act.requestForge(carol, 3);
    const { items } = await setup.hatchery.json<Page<{ id: string }>>('/editions');
    const editionId = BigInt(items[0]!.id);
    const fulfilled = await setup.act.fulfilForge(request.requestId, editionId, 0, 'Quick');
    const minedAt = Date.now();
    await waitFor(() => forge.some((event) => event.requestId === String(request.requestId)), 'forgeFulfilled', 15_000);
    expect(forge.find((event) => event.requestId === String(request.requestId))).toEqual({
      requestId: String(request.requestId),
      tokenId: String(fulfilled.tokenId),
      editionId: String(editionId),
      buyer: carol.toLowerCase(),
      sequence: expect.any(Number),
    });
    figures.push(`forgeFulfilled ${Date.now() - minedAt} ms after its block was mined`);

    const before = market.length;
    const minted = await setup.act.mint(alice, editionId, 1, 'Listed');
    const listed = await setup.act.list(alice, minted.tokenId, 7n * ether);
    const listedAt = Date.now();
    const active = (await setup.hatchery.json<Page<unknown>>('/marketplace/listings?pageSize=1')).totalCount;
    await waitFor(() => market.slice(before).some((event) => event.maxBlock === String(listed.blockNumber)), 'marketChanged', 15_000);
    figures.push(`marketChanged ${Date.now() - listedAt} ms after its block was mined`);
    const event = market.slice(before).find((each) => each.maxBlock === String(listed.blockNumber))!;
    expect(event.count).toBeGreaterThanOrEqual(active);
  }, 60_000);

  it('tells how far the index has got: X-Indexed-Block on every list, /health per chain, and the client waits for a block', async () => {
    const { admin, bob } = who();
    const transfer = await setup.act.transferToken(admin, bob, 1n);
    const client = createClient({ baseUrl: setup.hatchery.url });
    const reached = await client.waitForIndexedBlock(transfer.blockNumber, { timeoutMs: 15_000, intervalMs: 50 });
    expect(reached).toBeGreaterThanOrEqual(transfer.blockNumber);
    const page = await client.api.listSales();
    expect(indexedBlocks(page)?.[31337]).toBeGreaterThanOrEqual(transfer.blockNumber);
    const response = await setup.hatchery.get('/transparency/sales');
    expect(response.headers.get('x-indexed-block')).toMatch(/^31337=\d+$/);
    const health = await setup.hatchery.json<{
      indexer: { chains: { chainId: number; block: string; blockTimestamp: string; lagSeconds: number; ready: boolean }[] };
    }>('/health');
    const [chain] = health.indexer.chains;
    const head = await setup.chain.publicClient.getBlock({ blockNumber: BigInt(chain!.block) });
    expect(chain).toEqual({
      chainId: 31337,
      block: expect.stringMatching(/^\d+$/),
      safeBlock: expect.stringMatching(/^\d+$/),
      finalizedBlock: expect.stringMatching(/^\d+$/),
      blockTimestamp: new Date(Number(head.timestamp) * 1000).toISOString(),
      lagSeconds: expect.any(Number),
      ready: true,
    });
    expect(chain!.lagSeconds).toBeLessThan(60);
    figures.push(`/health when live: ${JSON.stringify(health.indexer)}`);
  }, 60_000);

  it('answers a read with minBlock one block ahead once Ponder indexes that block, and one far ahead with the problem within the bound', async () => {
    const { alice } = who();
    const { act, hatchery } = setup;
    const editionId = BigInt((await hatchery.json<Page<{ id: string }>>('/editions')).items[0]!.id);
    const minted = await act.mint(alice, editionId, 0, 'Awaited');
    await setup.indexed(minted.blockNumber);
    // Automine: the listing's transaction, sent after the read, is the next block.
    const next = minted.blockNumber + 1n;
    const sentAt = Date.now();
    const reading = hatchery.get(`/marketplace/listings?pageSize=100&minBlock=31337:${next}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const listed = await act.list(alice, minted.tokenId, 9n * ether);
    expect(listed.blockNumber).toBe(next);
    const response = await reading;
    const waited = Date.now() - sentAt;
    expect(response.status).toBe(200);
    expect(BigInt(response.headers.get('x-indexed-block')!.split('=')[1]!)).toBeGreaterThanOrEqual(next);
    const page = (await response.json()) as Page<{ tokenId: string }>;
    expect(page.items.map((item) => item.tokenId)).toContain(String(minted.tokenId));
    figures.push(`minBlock one ahead: answered with the new listing ${waited} ms after the read was sent (its transaction sent 300 ms after the read)`);

    const head = await setup.chain.blockNumber();
    await setup.indexed(head);
    const roundTripMs = await hatcheryRoundTrip();
    const { value: ahead, ms, lagMs } = await timed(() => hatchery.get(`/transparency/sales?minBlock=${head + 5n}`));
    const took = Math.round(ms);
    expect(ahead.status).toBe(409);
    expect(ahead.headers.get('retry-after')).toBe(String(minBlockLimits.retryAfterSeconds));
    expect(ahead.headers.get('cache-control')).toBe('no-store');
    expect(await ahead.json()).toMatchObject({ status: 409, minBlock: `31337:${head + 5n}`, indexedBlock: `31337:${head}` });
    expect(took).toBeGreaterThanOrEqual(minBlockLimits.waitMs - minBlockLimits.pollMs);
    // The wait's own bound, give or take a poll's lag and the round trips of this machine now.
    expect(took).toBeLessThan(minBlockLimits.waitMs + slackMs({ lagMs, roundTripMs }));
    const far = await hatchery.get(`/transparency/sales?minBlock=${head + BigInt(minBlockLimits.maxAheadBlocks) + 1n}`);
    expect(far.status).toBe(422);
    figures.push(`minBlock 5 ahead: 409 after ${took} ms (bound ${minBlockLimits.waitMs} ms)`);
  }, 60_000);

  it('reports the safe and finalized blocks Ponder keeps in _ponder_checkpoint, in /health and beside X-Indexed-Block', async () => {
    // Ponder finalizes 30 blocks behind the head once the head is 60 past its finalized block: enough empty blocks move it.
    const head = await setup.chain.mine(70);
    await setup.indexed(head);
    await expect.poll(async () => (await checkpoints()).finalized, { timeout: 10_000 }).toBeGreaterThan(0n);
    const { finalized, safe } = await checkpoints();
    // Nothing is mined here, so Ponder's finalized block stays put; the instance's view is at most a second old.
    await new Promise((resolve) => setTimeout(resolve, freshnessCacheMs + 50));
    const health = await setup.hatchery.json<{ indexer: { chains: { finalizedBlock: string; safeBlock: string; block: string }[] } }>('/health');
    expect(health.indexer.chains[0]).toMatchObject({ finalizedBlock: String(finalized), safeBlock: String(safe) });
    expect(BigInt(health.indexer.chains[0]!.block)).toBeGreaterThan(finalized);
    const response = await setup.hatchery.get('/transparency/summary');
    expect(response.headers.get('x-finalized-block')).toBe(`31337=${finalized}`);
    expect(response.headers.get('x-safe-block')).toBe(`31337=${safe}`);
    figures.push(`finality (${layout}): latest ${health.indexer.chains[0]!.block}, safe ${safe}, finalized ${finalized}, as _ponder_checkpoint has them`);
  }, 90_000);

  it('reads only the tables each block names: none for blocks that touch neither listings nor forge requests', async () => {
    const { admin, alice } = who();
    const editionId = BigInt((await setup.hatchery.json<Page<{ id: string }>>('/editions')).items[0]!.id);
    /**
     * Lists a token, and waits for its marketChanged: the listener takes Ponder's notifications in order, so by then it
     * has taken every one before it. Its block costs one read, of the listings.
     */
    const listenerCaughtUp = async (name: string) => {
      const minted = await setup.act.mint(alice, editionId, 0, name);
      const listed = await setup.act.list(alice, minted.tokenId, ether);
      await waitFor(() => market.some((event) => event.maxBlock === String(listed.blockNumber)), `${name}’s marketChanged`, 15_000);
    };
    await waitFor(async () => (await setup.hatchery.metric('hatchery_listener_reads_total')) > 0, 'a first read');
    const readsBefore = await setup.hatchery.metric('hatchery_listener_reads_total');
    const startedAt = Date.now();
    const blocks = 20;
    let last = 0n;
    for (let i = 0; i < blocks; i++) last = (await setup.act.transferToken(admin, alice, BigInt(i + 1))).blockNumber;
    await setup.indexed(last);
    await listenerCaughtUp('After the transfers');
    const reads = (await setup.hatchery.metric('hatchery_listener_reads_total')) - readsBefore;
    const polls = Math.ceil((Date.now() - startedAt) / 5_000) + 1;
    figures.push(
      `${blocks} blocks of token transfers: ${reads} listener reads in ${Date.now() - startedAt} ms (${polls} polls of 2 at most); before, every block's notification cost 2`,
    );
    // Only the 5 s fallback reads both, and the listing that showed the listener caught up one; a block that names neither
    // table costs nothing.
    expect(reads).toBeLessThanOrEqual(2 * polls + 1);
    expect(reads).toBeLessThan(2 * blocks);

    // A busy chain's mix: a quarter of the blocks list, a quarter request a forge, the rest mint and transfer.
    const { carol } = who();
    const mixBefore = await setup.hatchery.metric('hatchery_listener_reads_total');
    const mixStarted = Date.now();
    let mixLast = 0n;
    let mixBlocks = 0;
    for (let i = 0; i < 5; i++) {
      const minted = await setup.act.mint(alice, editionId, 0, `Busy ${i}`);
      const listed = await setup.act.list(alice, minted.tokenId, ether);
      await setup.act.requestForge(carol, 1);
      mixLast = (await setup.act.transferToken(admin, alice, 1n)).blockNumber;
      mixBlocks += 4;
      expect(listed.blockNumber).toBeLessThan(mixLast);
    }
    await setup.indexed(mixLast);
    await listenerCaughtUp('After the mix');
    const mixReads = (await setup.hatchery.metric('hatchery_listener_reads_total')) - mixBefore;
    const mixPolls = Math.ceil((Date.now() - mixStarted) / 5_000) + 1;
    figures.push(
      `${mixBlocks} blocks, 5 listing and 5 forge-request ones: ${mixReads} listener reads (${(mixReads / mixBlocks).toFixed(2)} a block, polls included); reading both on every block, ${2 * mixBlocks} and more (2 a block)`,
    );
    expect(mixReads).toBeLessThanOrEqual(10 + 1 + 2 * mixPolls);
  }, 90_000);

  it('keeps a client that orders marketChanged by version right through a reorg that lowers maxBlock', async () => {
    const { admin, alice } = who();
    const { act, chain, hatchery } = setup;
    // A client as docs/realtime.md has it: it keeps the event with the highest version; another keeps the highest maxBlock.
    let byVersion: MarketChanged | undefined;
    let byMaxBlock: MarketChanged | undefined;
    hub.on('marketChanged', (event: MarketChanged) => {
      if (!byVersion || event.version > byVersion.version) byVersion = event;
      if (!byMaxBlock || BigInt(event.maxBlock) >= BigInt(byMaxBlock.maxBlock)) byMaxBlock = event;
    });
    const editionId = BigInt((await hatchery.json<Page<{ id: string }>>('/editions')).items[0]!.id);
    const settled = (await hatchery.json<Page<unknown>>('/marketplace/listings')).totalCount;

    const snapshot = await chain.snapshot();
    const minted = await act.mint(alice, editionId, 0, 'Doomed');
    const listed = await act.list(alice, minted.tokenId, ether);
    await waitFor(() => market.some((event) => event.maxBlock === String(listed.blockNumber)), 'the doomed listing’s marketChanged', 15_000);
    const doomed = market.find((event) => event.maxBlock === String(listed.blockNumber))!;
    expect(doomed.count).toBe(settled + 1);

    // The same heights again, holding other transactions: Ponder reverts the listing.
    await chain.revert(snapshot);
    await act.transferToken(admin, alice, 5n);
    await chain.mine(1);
    const revertedAt = Date.now();
    await waitFor(() => byVersion !== undefined && byVersion.version > doomed.version, 'a marketChanged after the reorg', 20_000);
    figures.push(`reorg: marketChanged ${Date.now() - revertedAt} ms after the new head (the revert names no table; the 5 s fallback read sees it)`);
    expect(byVersion!.count).toBe(settled);
    expect(BigInt(byVersion!.maxBlock)).toBeLessThan(BigInt(doomed.maxBlock));
    // The listings that client reloads (with its version as v) are the chain's after the reorg.
    const reloaded = await hatchery.json<Page<{ tokenId: string }>>(`/marketplace/listings?pageSize=100&v=${byVersion!.version}`);
    expect(reloaded.totalCount).toBe(byVersion!.count);
    expect(reloaded.items.map((item) => item.tokenId)).not.toContain(String(minted.tokenId));
    // Ordering by maxBlock, as the docs once said, would have kept the reorged-out state.
    expect(byMaxBlock!.count).toBe(settled + 1);
  }, 60_000);

  /** When a row `query` finds appears, polled each 20 ms: the moment Ponder wrote it, give or take a poll. */
  const writtenAt = async (query: string, values: unknown[]) => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const polledAt = Date.now();
      if ((await setup.sql(query, values)).length > 0) return polledAt;
      if (Date.now() > deadline) throw new Error(`Ponder wrote no row for ${query} ${JSON.stringify(values)}`);
      await sleep(20);
    }
  };
  const delivered = async (to: keyof typeof webhooks, what: string, match: (event: DeliveredEvent) => boolean, timeoutMs = 10_000) => {
    await waitFor(() => webhooks[to].find(match) !== undefined, `${what} at the ${to} endpoint`, timeoutMs);
    return webhooks[to].find(match)!;
  };
  /** Mines empty blocks until Ponder's finalized block reaches `block`; returns when it did, give or take a poll of 20 ms. */
  const mineUntilFinalized = async (block: bigint) => {
    const deadline = Date.now() + 60_000;
    for (;;) {
      // Ponder moves its finalized block to 30 behind the head once the head is 60 past it.
      const head = await setup.chain.mine(10);
      for (;;) {
        const polledAt = Date.now();
        const { finalized, latest } = await checkpoints();
        if (finalized >= block) return polledAt;
        if (latest >= head) break;
        if (Date.now() > deadline) throw new Error(`Ponder's finalized block stayed at ${finalized}, short of ${block}`);
        await sleep(20);
      }
    }
  };
  const load = () => `load ${loadavg()[0]!.toFixed(2)}`;
  /** The fulfilment and the sale the latest endpoint had at once, for the finalized endpoint to have later. */
  let hooked: Delivery<bigint | undefined>[] = [];
  /** How long after Ponder wrote them the later of the two reached the latest endpoint. */
  let hookedWithinMs = 0;
  /** The slowest of a few GET /health (Hatchery reading Ponder's checkpoint), as this machine answers them now. */
  const hatcheryRoundTrip = () => slowestOf(async () => (await setup.hatchery.get('/health')).arrayBuffer());

  it('delivers a forge fulfilment and a sale to a latest endpoint within 2 s of Ponder writing their rows', async () => {
    const { alice, bob, carol } = who();
    const { act, hatchery } = setup;
    const schema = setup.ponder.readSchema;
    const editionId = BigInt((await hatchery.json<Page<{ id: string }>>('/editions')).items[0]!.id);
    const requested = await act.requestForge(carol, 1);
    const minted = await act.mint(alice, editionId, 1, 'Sold on the hook');
    const listed = await act.list(alice, minted.tokenId, 2n * ether);
    await setup.indexed(listed.blockNumber);

    const [fulfilled, fulfilmentWritten] = await Promise.all([
      act.fulfilForge(requested.requestId, editionId, 0, 'Hooked'),
      writtenAt(`SELECT 1 FROM ${schema}.forge_requests WHERE request_id = $1 AND status = 'Fulfilled'`, [String(requested.requestId)]),
    ]);
    const fulfilment = await delivered('latest', 'the fulfilment', (event) => event.type === 'forge.fulfilled' && event.entity === String(requested.requestId));
    const [sale, saleWritten] = await Promise.all([
      act.buy(bob, minted.tokenId),
      writtenAt(`SELECT 1 FROM ${schema}.sales WHERE token_id = $1`, [String(minted.tokenId)]),
    ]);
    const sold = await delivered('latest', 'the sale', (event) => event.type === 'sale.completed' && event.payload.tokenId === String(minted.tokenId));
    // 2 s, or on a machine so loaded that 20 of Hatchery's round trips take longer, those 20 round trips.
    const withinMs = Math.max(2_000, 20 * (await hatcheryRoundTrip()));
    figures.push(
      `webhooks at latest: forge.fulfilled ${fulfilment.at - fulfilmentWritten} ms, sale.completed ${sold.at - saleWritten} ms after Ponder wrote their rows (bound ${Math.round(withinMs)} ms; ${load()})`,
    );
    expect(fulfilment.event).toMatchObject({
      blockNumber: String(fulfilled.blockNumber),
      payload: { requestId: String(requested.requestId), buyer: lower(carol), tier: 1, tokenId: String(fulfilled.tokenId), editionId: String(editionId) },
    });
    expect(sold.event).toMatchObject({
      blockNumber: String(sale.blockNumber),
      payload: { seller: lower(alice), buyer: lower(bob), price: String(2n * ether), platformFee: String(sale.platformFee), royalty: String(sale.royalty) },
    });
    expect(fulfilment.at - fulfilmentWritten).toBeLessThan(withinMs);
    expect(sold.at - saleWritten).toBeLessThan(withinMs);
    // Both came while Ponder's finalized block was below theirs: latest waits for no finality.
    for (const { event, note } of [fulfilment, sold]) expect(note).toBeLessThan(BigInt(event.blockNumber));
    // The listing's opening and its close by the sale, and the NFT changing hands, come too.
    const listing = `${minted.tokenId}@${listed.blockNumber}`;
    await delivered('latest', 'the listing', (event) => event.type === 'listing.opened' && event.entity === listing);
    const closed = await delivered('latest', 'the listing’s close', (event) => event.type === 'listing.closed' && event.entity === listing);
    expect(closed.event.payload.status).toBe('Sold');
    await delivered(
      'latest',
      'the sold NFT’s transfer',
      (event) => event.type === 'nft.transferred' && event.entity === String(minted.tokenId) && event.payload.to === lower(bob),
    );
    expect(webhooks.latest.refused).toEqual([]);
    hooked = [fulfilment, sold];
    hookedWithinMs = Math.max(fulfilment.at - fulfilmentWritten, sold.at - saleWritten);
  }, 60_000);

  it('holds them from a finalized endpoint until Ponder’s finalized checkpoint covers their blocks', async () => {
    expect(hooked).toHaveLength(2);
    const ids = hooked.map(({ event }) => event.id);
    // The sale came last.
    const highest = BigInt(hooked.at(-1)!.event.blockNumber);
    // Every endpoint is handed its events in the same dispatch: had the finalized one taken them early, it would have
    // them as soon after the latest one did as the latest took, and five times that (a second at least) has gone by.
    await sleep(Math.max(1_000, 5 * hookedWithinMs));
    expect((await checkpoints()).finalized).toBeLessThan(highest);
    expect(webhooks.finalized.deliveries.filter(({ event }) => ids.includes(event.id))).toEqual([]);

    const coveredAt = await mineUntilFinalized(highest);
    const deliveries = await Promise.all(hooked.map(({ event }) => delivered('finalized', event.type, (each) => each.id === event.id, 15_000)));
    figures.push(
      `webhooks at finalized: ${deliveries.map(({ event, at }) => `${event.type} ${at - coveredAt} ms`).join(', ')} after Ponder's finalized checkpoint covered their blocks (no block follows, and Ponder's finalizing notifies nothing: the 5 s fallback pass sees it) (${load()})`,
    );
    // The same events as at latest (the same ids, for receivers to dedupe on), each once Ponder's finalized block covered it.
    for (const [index, { event, note }] of deliveries.entries()) {
      expect(event).toEqual(hooked[index]!.event);
      expect(note).toBeGreaterThanOrEqual(BigInt(event.blockNumber));
    }
    for (const { event, note } of webhooks.finalized.deliveries) expect(note, event.id).toBeGreaterThanOrEqual(BigInt(event.blockNumber));
    expect(webhooks.finalized.refused).toEqual([]);
  }, 90_000);

  it('sends a latest endpoint `<type>.reverted` naming each event a reorg removed, and a finalized endpoint neither the events nor their retractions', async () => {
    const { admin, alice, carol } = who();
    const { act, chain, hatchery } = setup;
    const editionId = BigInt((await hatchery.json<Page<{ id: string }>>('/editions')).items[0]!.id);
    // A token minted before the reorg, to be listed after it.
    const marker = await act.mint(alice, editionId, 1, 'Marker');
    const markerMinted = await delivered(
      'latest',
      'the marker’s mint',
      (event) => event.type === 'nft.transferred' && event.entity === String(marker.tokenId) && event.payload.from === zeroAddress,
    );

    const snapshot = await chain.snapshot();
    const unmade = await act.mint(alice, editionId, 0, 'Unmade');
    const listed = await act.list(alice, unmade.tokenId, ether);
    const requested = await act.requestForge(carol, 1);
    const fulfilled = await act.fulfilForge(requested.requestId, editionId, 1, 'Unforged');
    const opened = await delivered(
      'latest',
      'the unmade listing',
      (event) => event.type === 'listing.opened' && event.entity === `${unmade.tokenId}@${listed.blockNumber}`,
    );
    const forged = await delivered(
      'latest',
      'the unmade fulfilment',
      (event) => event.type === 'forge.fulfilled' && event.entity === String(requested.requestId) && event.blockNumber === String(fulfilled.blockNumber),
    );
    const minted = await Promise.all(
      [unmade.tokenId, fulfilled.tokenId].map((tokenId) =>
        delivered(
          'latest',
          `token ${tokenId}'s mint`,
          (event) =>
            event.type === 'nft.transferred' &&
            event.entity === String(tokenId) &&
            event.payload.from === zeroAddress &&
            event.position > markerMinted.event.position,
        ),
      ),
    );

    // The same heights again, holding other transactions: Ponder reverts the rows of the four blocks.
    await chain.revert(snapshot);
    await act.transferToken(admin, alice, 5n);
    await chain.mine(Number(fulfilled.blockNumber - (await chain.blockNumber())));
    const reorgedAt = Date.now();
    const retractions = await Promise.all(
      [opened, forged].map(({ event }) =>
        delivered('latest', `${event.type}.reverted`, (each) => each.type === `${event.type}.reverted` && each.reverts?.id === event.id, 20_000),
      ),
    );
    figures.push(`reorg: ${retractions.map(({ event, at }) => `${event.type} ${at - reorgedAt} ms`).join(', ')} after the new head, at latest (${load()})`);
    for (const [index, { event }] of retractions.entries()) {
      const original = [opened, forged][index]!.event;
      expect(event).toMatchObject({
        entity: original.entity,
        blockNumber: original.blockNumber,
        payload: original.payload,
        reverts: { position: original.position },
      });
    }

    // Listed after the reorg, the marker's listing reaches the finalized endpoint after all the log holds before it.
    const markerListed = await act.list(alice, marker.tokenId, ether);
    await mineUntilFinalized(markerListed.blockNumber);
    await delivered(
      'finalized',
      'the marker’s listing',
      (event) => event.type === 'listing.opened' && event.entity === `${marker.tokenId}@${markerListed.blockNumber}`,
      15_000,
    );
    const unmadeIds = new Set([opened, forged, ...minted].map(({ event }) => event.id));
    const neverFinal = () => webhooks.finalized.deliveries.filter(({ event }) => unmadeIds.has(event.id) || event.type.endsWith('.reverted'));
    expect(neverFinal()).toEqual([]);
    // The mints the reorg unmade are retracted at latest as well, by the time their block is final.
    await Promise.all(
      minted.map(({ event }) =>
        delivered('latest', 'nft.transferred.reverted', (each) => each.type === 'nft.transferred.reverted' && each.reverts?.id === event.id),
      ),
    );
    expect(neverFinal()).toEqual([]);
    for (const { event, note } of webhooks.finalized.deliveries) expect(note, event.id).toBeGreaterThanOrEqual(BigInt(event.blockNumber));
    expect([...webhooks.latest.refused, ...webhooks.finalized.refused]).toEqual([]);
  }, 120_000);

  it(layout === 'views'
    ? 'keeps serving the live deployment while a new one backfills behind the views, then follows it'
    : 'reports a backfill as not ready, with its lag, until Ponder has caught up', async () => {
    const head = await setup.chain.blockNumber();
    const schema = layout === 'views' ? 'indexer_v2' : 'indexer_backfill';
    const next = await spawnPonder({
      databaseUrl: setup.databaseUrl,
      layout,
      ...(layout === 'views' ? { deploymentSchema: schema } : { schema }),
      chain: setup.chain,
      contracts: setup.contracts,
    });
    const seen: string[] = [];
    try {
      // The direct layout's second indexer is read as Hatchery would read it with INDEXER_SCHEMA=indexer_backfill.
      const observe = async (): Promise<Health['indexer']> => {
        if (layout === 'views') return (await setup.hatchery.json<Health>('/health')).indexer;
        const previous = process.env.INDEXER_SCHEMA;
        process.env.INDEXER_SCHEMA = schema;
        try {
          const { readFreshness } = await import('@hatchery/core/indexer/freshness-read');
          const client = new pg.Client({ connectionString: setup.databaseUrl });
          await client.connect();
          try {
            return await readFreshness(client);
          } finally {
            await client.end();
          }
        } finally {
          if (previous === undefined) delete process.env.INDEXER_SCHEMA;
          else process.env.INDEXER_SCHEMA = previous;
        }
      };
      const newReady = async () =>
        (await setup.sql<{ ready: boolean }>(`SELECT (value->>'is_ready') = '1' AS ready FROM "${schema}"._ponder_meta WHERE key = 'app'`).catch(() => []))[0]
          ?.ready === true;
      const deadline = Date.now() + 60_000;
      let done = false;
      while (!done) {
        if (Date.now() > deadline) throw new Error(`the second Ponder did not catch up: ${next.logs().slice(-10).join('\n')}`);
        const ready = await newReady();
        const indexer = await observe();
        // Ready once the backfill reaches the finalized block; caught up once live indexing reaches the head too.
        done = ready && (layout === 'views' || (indexer !== 'unknown' && BigInt(indexer.chains[0]!.block) >= head));
        const text = JSON.stringify(indexer);
        if (seen.at(-1) !== text) seen.push(text);
        if (layout === 'views') {
          // Whatever the new deployment is doing, the readers' schema is the live one's: caught up and ready.
          expect(indexer).not.toBe('unknown');
          expect((indexer as { chains: Chains }).chains[0]).toMatchObject({ chainId: 31337, ready: true });
        }
        // The direct layout's backfill can be over in moments, so it is looked at often; the views layout asks /health,
        // whose every answer reads the database, and a poll each 5 ms would load the database it asks about.
        await new Promise((resolve) => setTimeout(resolve, layout === 'views' ? 50 : 5));
      }
      const shown = seen.length > 6 ? [...seen.slice(0, 5), '…', seen.at(-1)!] : seen;
      figures.push(`/health while a second deployment backfilled ${head} blocks (${layout}): ${shown.join(' → ')}`);
      if (layout === 'views') {
        // Once ready, Ponder points the views at the new deployment, and Hatchery reads it from then on.
        await waitFor(
          async () =>
            (
              (await setup.sql<{ definition: string }>(`SELECT definition FROM pg_views WHERE schemaname = 'indexer' AND viewname = 'listings'`))[0]
                ?.definition ?? ''
            ).includes(schema),
          'the views to move',
          20_000,
        );
        expect((await setup.hatchery.json<Page<unknown>>('/marketplace/listings')).totalCount).toBeGreaterThan(0);
      } else {
        const parsed = seen.map((text) => JSON.parse(text) as Health['indexer']);
        const last = parsed.at(-1) as { chains: Chains };
        expect(last.chains[0]).toMatchObject({ chainId: 31337, ready: true });
        expect(BigInt(last.chains[0]!.block)).toBeGreaterThanOrEqual(head);
        // Until its tables existed its freshness was unknown, not an error; then a backfill, not ready, behind the chain.
        expect(parsed[0]).toBe('unknown');
        const backfilling = parsed.filter((each): each is { chains: Chains } => each !== 'unknown' && !each.chains[0]!.ready);
        expect(backfilling.length).toBeGreaterThan(0);
        expect(BigInt(backfilling[0]!.chains[0]!.block)).toBeLessThan(head);
      }
    } finally {
      await next.stop();
    }
  }, 90_000);
}
