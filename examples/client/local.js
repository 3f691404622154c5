// docs/client.md's front-end example (app.js, as written) against the local stack, with stand-ins for what a game's
// page has: a wallet in window.ethereum (a viem local account behind a minimal EIP-1193 provider) and Firebase Auth's
// `auth` (the local identity provider's token). docs/client.md says how to serve it; open the page with
// ?token=<npm run token's output>, and &key=0x… to sign with a test key of your own (otherwise a new one each load).
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const log = document.getElementById('log');
const text = (value) => (typeof value === 'string' ? value : JSON.stringify(value, (_key, each) => (typeof each === 'bigint' ? `${each}n` : each)));
// The example's console lines on the page too, so it reads without developer tools.
for (const level of ['log', 'error']) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    original(...args);
    log.textContent += `${args.map(text).join(' ')}\n`;
  };
}
window.addEventListener('unhandledrejection', (event) => console.error(`stopped: ${event.reason?.message ?? event.reason}`));

const query = new URLSearchParams(location.search);
const token = query.get('token');
const key = query.get('key');
if (!token) {
  console.error('Open this page with ?token=… : `npm run -s token -- --uid <id> --email <email> | tail -1` prints one (docs/client.md).');
} else if (key !== null && !/^0x[0-9a-fA-F]{64}$/.test(key)) {
  console.error('&key= takes a private key: 0x followed by 64 hex characters. A test key only, never one that holds funds.');
} else {
  const account = privateKeyToAccount(key ?? generatePrivateKey());
  // EIP-1193's request(), the two methods linking a wallet uses; any other is refused as unsupported (4200).
  window.ethereum = {
    request: async ({ method, params }) => {
      if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [account.address];
      if (method === 'personal_sign') return account.signMessage({ message: { raw: params[0] } });
      throw Object.assign(new Error(`${method} is not supported by this test wallet`), { code: 4200 });
    },
  };
  // Firebase Auth's shape, as far as the example reads it.
  window.auth = { currentUser: { getIdToken: async () => token } };
  console.log(`wallet ${account.address.toLowerCase()} (a local test key): the example links it to the token's account`);
  // Imported once the stand-ins are in place (a static import would run app.js first).
  await import('./app.js');
}
