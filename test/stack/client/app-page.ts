import { createServer, type Server } from 'node:http';
import { basename } from 'node:path';
import * as esbuild from 'esbuild';
import { buildOptions } from '../../../packages/client/build.mjs';
import { listenOnLoopback } from '../../browser/page';

/**
 * A game's front end on its own origin: @hatchery/client's browser bundle (as
 * `npm run build -w @hatchery/client` writes it) and @microsoft/signalr for
 * the browser, joined by an import map, and an app script that uses the
 * client as docs/client.md shows. The wallet is whatever `window.ethereum` is.
 */
const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Hatchery client in a browser</title>
<script type="importmap">{ "imports": { "@microsoft/signalr": "/vendor/signalr.js" } }</script>
<style>body{font:14px/1.5 system-ui,sans-serif;margin:2rem}pre{background:#f4f4f4;padding:1rem;white-space:pre-wrap}</style>
</head><body>
<h1>Hatchery client, from <span id="origin"></span></h1>
<pre id="log"></pre>
<script type="module">
import { createClient } from '/client/index.js';
import { connectEvents } from '/client/events.js';

document.getElementById('origin').textContent = location.origin;
const log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
window.seen = { market: [], forge: [], restored: 0, log: [], listings: undefined };
const note = (line) => { window.seen.log.push(line); log(line); };

window.run = async ({ api, token }) => {
  const client = createClient({ baseUrl: api, getToken: async () => token });
  const outcome = await client.linkWallet(window.ethereum);
  if (!outcome.ok) throw new Error('link refused: ' + outcome.reason);
  const account = await client.requireWalletLinked();
  const wallet = account.walletAddress;
  note('linked ' + wallet + ' after ' + outcome.challenges + ' challenge(s)');

  const events = await connectEvents({ baseUrl: api, client, reconnectDelaysMs: [0, 250] });
  window.events = events;
  events.onMarketChanged(async (event) => {
    window.seen.market.push(event);
    note('marketChanged (debounced) ' + JSON.stringify(event));
    // As a marketplace page does: the listings read again on each change.
    const page = await client.api.listListings({ pageSize: 100 });
    window.seen.listings = { totalCount: page.totalCount, tokenIds: page.items.map((item) => item.tokenId) };
  });
  events.onForgeFulfilled((event) => { window.seen.forge.push(event); note('forgeFulfilled ' + JSON.stringify(event)); });
  events.onRestored((error) => { window.seen.restored++; note(error ? 'restore failed: ' + error : 'reconnected; subscriptions restored'); });
  await events.subscribe(wallet);
  note('subscribed to ' + wallet);
  return wallet;
};

/** The forge client: the next open request of the wallet, waited for (event, else the endpoint after 45 s). */
window.forgeNext = async ({ api, wallet }) => {
  const client = createClient({ baseUrl: api });
  for (;;) {
    const page = await client.api.listAccountForgeRequests({ address: wallet, filter: (f) => f.status.eq('Requested'), orderBy: (f) => f.requestId.asc(), pageSize: 1 });
    const open = page.items[0];
    if (open) {
      const result = await window.events.waitForForgeFulfilled(wallet, open.requestId);
      note('forge request ' + open.requestId + ' fulfilled, told by the ' + result.source);
      return result;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
</script></body></html>`;

export interface AppPage {
  origin: string;
  close(): Promise<void>;
}

async function browserFiles(): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const client = await esbuild.build({ ...buildOptions(), write: false });
  for (const file of client.outputFiles) files.set(`/client/${basename(file.path)}`, file.contents);
  const signalr = await esbuild.build({
    stdin: { contents: `export * from '@microsoft/signalr';`, resolveDir: import.meta.dirname },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'warning',
  });
  files.set('/vendor/signalr.js', signalr.outputFiles[0]!.contents);
  files.set('/', new TextEncoder().encode(html));
  return files;
}

export async function serveAppPage(): Promise<AppPage> {
  const files = await browserFiles();
  const server: Server = createServer((request, response) => {
    const body = files.get(request.url ?? '');
    if (!body) return void response.writeHead(404).end();
    response.writeHead(200, { 'content-type': request.url === '/' ? 'text/html; charset=utf-8' : 'text/javascript' });
    response.end(body);
  });
  return listenOnLoopback(server);
}
