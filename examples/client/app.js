import { createClient, filter } from '@hatchery/client';
import { connectEvents } from '@hatchery/client/events';

const baseUrl = 'http://127.0.0.1:3000';
// `auth` is your Firebase Auth; any function that returns the identity provider's token fits.
const hatchery = createClient({ baseUrl, getToken: () => auth.currentUser?.getIdToken() });

// The wallet link: a challenge, personal_sign in the player's wallet, the link (a new challenge after a 410).
const linked = await hatchery.linkWallet(window.ethereum);
if (!linked.ok) throw new Error(`wallet not linked: ${linked.reason}`);
const wallet = linked.account.walletAddress;

// Typed lists; filters and sorts only on the endpoint's own fields, values escaped.
const { items, totalCount } = await hatchery.api.listListings({
  filter: filter.listings.price.lte(5n * 10n ** 18n).and(filter.listings.editionName.contains('edition', { ignoreCase: true })),
  orderBy: (f) => f.price.asc(),
  pageSize: 10,
});
console.log(`${totalCount} listings, first ${items[0]?.tokenId}`);

// A whole list, page after page by cursor: the sales history, every sale once, however long.
let sales = 0;
let volume = 0n;
for await (const sale of hatchery.walk('listSales', { pageSize: 100 })) {
  sales += 1;
  volume += BigInt(sale.price);
}
console.log(`${sales} sales in the history, ${volume} wei in all`);

// Realtime: reconnects by itself and subscribes again after each reconnect.
const events = await connectEvents({ baseUrl, client: hatchery });
// Debounced, 300 ms. `v` makes the reload's URL one no shared cache answered before this change, and its totalCount one counted after it.
events.onMarketChanged(async (market) => {
  const fresh = await hatchery.api.listListings({ pageSize: 10, v: String(market.version) });
  console.log('reload listings', market, fresh.totalCount);
});
await events.subscribe(wallet);

// The gate before any chain write: throws unless signed in with this wallet linked.
await hatchery.requireWalletLinked({ address: wallet });
// … the player sends a forge transaction; then its request is waited for:
const [open] = (await hatchery.api.listAccountForgeRequests({ address: wallet, filter: (f) => f.status.eq('Requested') })).items;
if (open) console.log('forged', await events.waitForForgeFulfilled(wallet, open.requestId));
