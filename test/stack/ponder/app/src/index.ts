import { ponder } from 'ponder:registry';
import {
  editions,
  forgeRequests,
  listings,
  nfts,
  referralBnbAccruals,
  referralBnbClaims,
  referralLinks,
  referralRegistrations,
  sales,
  stakingPairs,
  tokenTransfers,
} from 'ponder:schema';

const zeroAddress = '0x0000000000000000000000000000000000000000';

/** The id of a row that one log creates: its transaction and its index in the block, as chain.ts computes it from a receipt. */
const logId = (event: { transaction: { hash: string }; log: { logIndex: number } }) => `${event.transaction.hash}-${event.log.logIndex}`;

// Editions and NFTs

ponder.on('Hatchery:EditionCreated', async ({ event, context }) => {
  const { edition } = event.args;
  await context.db.insert(editions).values({
    editionId: event.args.editionId,
    name: edition.name,
    artUri: edition.artUri,
    health: edition.health,
    skill: edition.skill,
    morale: edition.morale,
    rarity: edition.rarity,
    maxSupply: edition.maxSupply,
    minted: 0n,
    mintStart: edition.mintStart,
    mintEnd: edition.mintEnd,
    price: edition.price,
    distribution: edition.distribution,
    active: false,
  });
});

ponder.on('Hatchery:EditionActiveSet', async ({ event, context }) => {
  await context.db.update(editions, { editionId: event.args.editionId }).set({ active: event.args.active });
});

ponder.on('Hatchery:Minted', async ({ event, context }) => {
  await context.db.insert(nfts).values({
    tokenId: event.args.tokenId,
    owner: event.args.owner,
    editionId: event.args.editionId,
    gender: event.args.gender,
    nftName: event.args.name,
    staked: false,
    burned: false,
  });
  await context.db.update(editions, { editionId: event.args.editionId }).set((row) => ({ minted: row.minted + 1n }));
});

ponder.on('Hatchery:Transfer', async ({ event, context }) => {
  const { from, to, tokenId } = event.args;
  // A mint's Transfer comes before its Minted event, which creates the row.
  if (from === zeroAddress) return;
  if (to === zeroAddress) await context.db.update(nfts, { tokenId }).set({ burned: true });
  else await context.db.update(nfts, { tokenId }).set({ owner: to });
});

// Market

ponder.on('Hatchery:Listed', async ({ event, context }) => {
  const block = event.block.number;
  const nft = await context.db.find(nfts, { tokenId: event.args.tokenId });
  const listing = {
    seller: event.args.seller,
    price: event.args.price,
    status: 'Active' as const,
    editionId: nft?.editionId ?? null,
    listedAtBlock: block,
    updatedAtBlock: block,
    txHash: event.transaction.hash,
  };
  await context.db
    .insert(listings)
    .values({ tokenId: event.args.tokenId, ...listing })
    .onConflictDoUpdate(listing);
});

ponder.on('Hatchery:ListingCancelled', async ({ event, context }) => {
  await context.db.update(listings, { tokenId: event.args.tokenId }).set({ status: 'Cancelled', updatedAtBlock: event.block.number });
});

ponder.on('Hatchery:Sold', async ({ event, context }) => {
  const { tokenId, seller, buyer, price, platformFee, royalty } = event.args;
  await context.db.update(listings, { tokenId }).set({ status: 'Sold', updatedAtBlock: event.block.number });
  await context.db.insert(sales).values({ id: logId(event), tokenId, seller, buyer, price, platformFee, royalty, blockNumber: event.block.number });
});

// Forge

ponder.on('Hatchery:ForgeRequested', async ({ event, context }) => {
  await context.db.insert(forgeRequests).values({
    requestId: event.args.requestId,
    buyer: event.args.buyer,
    tier: event.args.tier,
    status: 'Requested',
    tokenId: null,
    editionId: null,
    blockNumber: event.block.number,
    fulfilledAtBlock: null,
  });
});

ponder.on('Hatchery:ForgeFulfilled', async ({ event, context }) => {
  await context.db.update(forgeRequests, { requestId: event.args.requestId }).set({
    status: 'Fulfilled',
    tokenId: event.args.tokenId,
    editionId: event.args.editionId,
    fulfilledAtBlock: event.block.number,
  });
});

ponder.on('Hatchery:ForgeCancelled', async ({ event, context }) => {
  await context.db.update(forgeRequests, { requestId: event.args.requestId }).set({ status: 'Cancelled' });
});

// Staking

ponder.on('Hatchery:PairStaked', async ({ event, context }) => {
  const { pairId, staker, maleId, femaleId, matched, stakedAt } = event.args;
  await context.db.insert(stakingPairs).values({ pairId, staker, maleId, femaleId, matched, stakedAt, lastClaimAt: stakedAt, status: 'Staked' });
  await context.db.update(nfts, { tokenId: maleId }).set({ staked: true });
  if (femaleId !== 0n) await context.db.update(nfts, { tokenId: femaleId }).set({ staked: true });
});

ponder.on('Hatchery:PairClaimed', async ({ event, context }) => {
  await context.db.update(stakingPairs, { pairId: event.args.pairId }).set({ lastClaimAt: event.args.claimedAt });
});

ponder.on('Hatchery:PairUnstaked', async ({ event, context }) => {
  const pair = await context.db.update(stakingPairs, { pairId: event.args.pairId }).set({ status: 'Unstaked' });
  await context.db.update(nfts, { tokenId: pair.maleId }).set({ staked: false });
  if (pair.femaleId !== 0n) await context.db.update(nfts, { tokenId: pair.femaleId }).set({ staked: false });
});

// Referrals

ponder.on('Hatchery:ReferrerRegistered', async ({ event, context }) => {
  await context.db.insert(referralRegistrations).values({ referrer: event.args.referrer, code: event.args.code, blockNumber: event.block.number });
});

ponder.on('Hatchery:ReferralLinked', async ({ event, context }) => {
  await context.db.insert(referralLinks).values({ buyer: event.args.buyer, referrer: event.args.referrer, blockNumber: event.block.number });
});

ponder.on('Hatchery:ReferralAccrued', async ({ event, context }) => {
  const { referrer, buyer, amount } = event.args;
  await context.db.insert(referralBnbAccruals).values({ id: logId(event), referrer, buyer, amount, blockNumber: event.block.number });
});

ponder.on('Hatchery:ReferralClaimed', async ({ event, context }) => {
  const { referrer, amount } = event.args;
  await context.db.insert(referralBnbClaims).values({ id: logId(event), referrer, amount, blockNumber: event.block.number });
});

// The token

ponder.on('HatchToken:Transfer', async ({ event, context }) => {
  const { from, to, value } = event.args;
  await context.db.insert(tokenTransfers).values({ id: logId(event), fromAddr: from, toAddr: to, value, blockNumber: event.block.number });
});
