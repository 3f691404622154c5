import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { metricCatalog } from '@hatchery/platform/telemetry/metrics';
import { connectionStore, shardOf } from '@hatchery/core/realtime/connections';
import { marketChangedMessage } from '@hatchery/core/realtime/events';
import { localFanOutFunction } from '@hatchery/local/stack';
import { functionShards } from '@hatchery/listener/shards';
import { demoAddress, demoSizes } from '@hatchery/local/demo-data';
import type { EmfDocument } from '@hatchery/local/metrics';
import { call, client, freshCaller, type Challenge } from '../accounts/support';
import { connectHub, indexer, waitFor, wallet } from '../realtime/support';
import { startTestStack, type TestStack } from '../../support/stack';
import { parseEmf } from '../../support/emf';

/**
 * The EMF lines the handlers and the listener print, read back as CloudWatch
 * would, while real requests go through the local gateway; and /metrics.
 */
let stack: TestStack;
let seen: { document: EmfDocument; line: string }[] = [];

beforeAll(async () => {
  stack = await startTestStack({ demoData: demoSizes.demo, env: { WALLET_POSTS_PER_MINUTE: '3' } });
  stack.metrics.subscribe((document, line) => seen.push({ document, line }));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

beforeEach(() => {
  seen = [];
});

const service = 'hatchery';
const byRoute = (route: string) => seen.map(({ document }) => document).filter((document) => document.route === route);
const withMetric = (name: string) => seen.map(({ document }) => document).filter((document) => name in document);
const sumOf = (name: string, documents = withMetric(name)) =>
  documents.reduce((total, document) => total + [document[name] ?? 0].flat().reduce((a: number, b) => a + (b as number), 0), 0);
const names = (document: EmfDocument) => document._aws.CloudWatchMetrics.flatMap((directive) => directive.Metrics.map((metric) => metric.Name));

describe('HTTP metrics', () => {
  it('prints one EMF line per request: route and service dimension sets, requests, latency, status class, database time', async () => {
    expect((await call(stack, 'GET', '/editions?pageSize=2')).status).toBe(200);
    expect((await call(stack, 'GET', '/editions?page=0')).status).toBe(422);
    await waitFor(() => byRoute('GET /editions').length === 2, 'two EMF documents for GET /editions');
    const [ok, invalid] = byRoute('GET /editions');
    for (const document of [ok!, invalid!]) {
      const line = seen.find((entry) => entry.document === document)!.line;
      expect(parseEmf(line)).toEqual(document);
      const [directive] = document._aws.CloudWatchMetrics;
      expect(directive!.Namespace).toBe('Hatchery');
      expect(directive!.Dimensions).toEqual([['service', 'route'], ['service']]);
      expect(document.service).toBe(service);
      expect(Math.abs(document._aws.Timestamp - Date.now())).toBeLessThan(60_000);
      for (const metric of directive!.Metrics) expect(metric.Unit, metric.Name).toBe(metricCatalog[metric.Name as keyof typeof metricCatalog].unit);
      expect(document.Requests).toBe(1);
      expect(document.Latency).toBeGreaterThan(0);
      expect(document.Responses5xx).toBe(0);
      // What is zero is left out, but for the 5xx mark, which its alarm averages over requests.
      expect(document).not.toHaveProperty('Responses503');
      expect(document).not.toHaveProperty('DatabaseRetries');
    }
    expect(ok).not.toHaveProperty('Responses4xx');
    expect(ok!.DatabaseTime).toBeGreaterThan(0);
    // Validation fails before any query.
    expect(invalid).toMatchObject({ Responses4xx: 1 });
    expect(invalid).not.toHaveProperty('DatabaseTime');
  });

  it('keeps concurrent invocations apart, as Lambda does with several per instance: each document holds its own request’s figures', async () => {
    const callers = await Promise.all(Array.from({ length: 12 }, () => client(stack, freshCaller('concurrent'))));
    const replies = await Promise.all([...callers.map((caller) => caller.me()), ...callers.map(() => call(stack, 'GET', '/editions'))]);
    expect(replies.every((reply) => reply.status === 200)).toBe(true);
    await waitFor(() => byRoute('GET /accounts/me').length === 12 && byRoute('GET /editions').length === 12, 'a document per request', 30_000);
    // Each first request provisioned its own account, and its document says so once, whatever ran meanwhile.
    expect(byRoute('GET /accounts/me').map((document) => document.AccountsProvisioned)).toEqual(Array(12).fill(1));
    expect(byRoute('GET /editions').every((document) => !('AccountsProvisioned' in document))).toBe(true);
    for (const document of [...byRoute('GET /accounts/me'), ...byRoute('GET /editions')]) {
      expect(document).toMatchObject({ Requests: 1, Responses5xx: 0 });
      expect(document).not.toHaveProperty('Responses4xx');
      expect(typeof document.Latency).toBe('number');
      expect(typeof document.DatabaseTime).toBe('number');
    }
    // GET /accounts/me runs its statements one after the other, so its database time is part of its own latency, never another's added in.
    for (const document of byRoute('GET /accounts/me')) expect(document.DatabaseTime as number).toBeLessThanOrEqual(document.Latency as number);
  }, 60_000);

  it('moves the counters /metrics serves in Prometheus text by exactly the requests made', async () => {
    const route = `GET /accounts/{address}/nfts`;
    const before = stack.metrics.series('Requests', { service, route }).sum;
    const total = stack.metrics.series('Requests', { service }).sum;
    const clientErrors = stack.metrics.series('Responses4xx', { service, route }).sum;
    for (let i = 0; i < 3; i++) expect((await call(stack, 'GET', `/accounts/${demoAddress(1)}/nfts`)).status).toBe(200);
    expect((await call(stack, 'GET', '/accounts/not-an-address/nfts')).status).toBe(422);
    await waitFor(() => stack.metrics.series('Requests', { service, route }).sum === before + 4, 'four more requests on the route');
    expect(stack.metrics.series('Requests', { service }).sum).toBe(total + 4);
    expect(stack.metrics.series('Responses4xx', { service, route }).sum).toBe(clientErrors + 1);
    const response = await fetch(`${stack.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0.0.4/);
    const text = await response.text();
    expect(text).toContain('# TYPE hatchery_requests_total counter');
    expect(text).toContain(`hatchery_requests_total{route="${route}",service="hatchery"} ${before + 4}`);
    expect(text).toContain('# TYPE hatchery_latency_milliseconds summary');
    expect(text).toMatch(new RegExp(`hatchery_latency_milliseconds_count\\{route="GET /accounts/\\{address\\}/nfts",service="hatchery"\\} ${before + 4}\\n`));
    // /metrics itself is the gateway's, not a function: it counts nothing.
    expect(stack.metrics.series('Requests', { service }).sum).toBe(total + 4);
  });
});

describe('account metrics', () => {
  it('counts an account provisioned once, a provisioning conflict, a challenge issued once', async () => {
    const caller = freshCaller('metrics');
    const me = await client(stack, caller);
    expect((await me.me()).status).toBe(200);
    expect((await me.me()).status).toBe(200);
    const thief = await client(stack, { uid: `${caller.uid}-other`, email: caller.email, name: 'Other' });
    expect((await thief.me()).status).toBe(409);
    expect((await me.nonce()).status).toBe(200);
    expect((await me.nonce()).status).toBe(200);
    await waitFor(() => byRoute('POST /accounts/me/wallet/nonce').length === 2 && byRoute('GET /accounts/me').length === 3, 'five EMF documents');
    expect(sumOf('AccountsProvisioned', byRoute('GET /accounts/me'))).toBe(1);
    expect(sumOf('ProvisioningConflicts', byRoute('GET /accounts/me'))).toBe(1);
    expect(byRoute('GET /accounts/me').map((document) => document.Responses4xx ?? 0)).toEqual([0, 0, 1]);
    expect(byRoute('POST /accounts/me/wallet/nonce').map((document) => document.ChallengesIssued ?? 0)).toEqual([1, 0]);
  });

  it('counts link failures by reason, wallets linked, and requests over the per-account limit', async () => {
    const signer = privateKeyToAccount(generatePrivateKey());
    const stranger = privateKeyToAccount(generatePrivateKey());
    const me = await client(stack, freshCaller('metrics-link'));
    expect((await me.link({ address: signer.address, signature: `0x${'1'.repeat(130)}` })).status).toBe(410);
    const challenge = (await me.nonce()).body as Challenge;
    const signature = await signer.signMessage({ message: challenge.message });
    expect((await me.link({ address: stranger.address, signature })).status).toBe(422);
    await waitFor(() => byRoute('POST /accounts/me/wallet').length === 2, 'two link documents');
    const other = await client(stack, freshCaller('metrics-link'));
    const otherChallenge = (await other.nonce()).body as Challenge;
    expect((await other.link({ address: signer.address, signature: await signer.signMessage({ message: otherChallenge.message }) })).status).toBe(200);
    // The three wallet POSTs of `me` (limit 3 a minute: the nonce counts) are spent: the fourth is refused.
    expect((await me.link({ address: signer.address, signature })).status).toBe(429);
    await waitFor(() => byRoute('POST /accounts/me/wallet').length === 4, 'four link documents');

    const failures = withMetric('WalletLinkFailures');
    expect(failures.map((document) => [document.reason, document.WalletLinkFailures, document._aws.CloudWatchMetrics[0]!.Dimensions])).toEqual([
      ['noChallenge', 1, [['service', 'reason']]],
      ['addressMismatch', 1, [['service', 'reason']]],
    ]);
    expect(sumOf('WalletsLinked')).toBe(1);
    expect(sumOf('RateLimited')).toBe(1);
    expect(byRoute('POST /accounts/me/wallet').at(-1)).toMatchObject({ RateLimited: 1, Responses4xx: 1 });
  });
});

describe('hub and listener metrics', () => {
  it('counts connects, messages, subscriptions and disconnects of the hub', async () => {
    const hub = await connectHub(stack.url);
    await hub.invoke('Subscribe', wallet(1));
    await hub.stop();
    await waitFor(() => withMetric('HubDisconnects').length === 1, 'the $disconnect document');
    expect(sumOf('HubConnects')).toBe(1);
    expect(sumOf('HubSubscriptions')).toBe(1);
    // The handshake and the Subscribe invocation.
    expect(sumOf('HubMessages')).toBeGreaterThanOrEqual(2);
    for (const document of [...withMetric('HubConnects'), ...withMetric('HubDisconnects')]) {
      expect(document._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    }
  });

  it('publishes a read document with a heartbeat and the lag from NOTIFY, and one per event with its kind and posts', async () => {
    const hub = await connectHub(stack.url);
    const activity = indexer(stack);
    try {
      await activity.listToken();
      await waitFor(
        () => withMetric('ListenerLag').length > 0 && withMetric('ListenerEvents').some((document) => document.kind === 'marketChanged'),
        'a read answering the NOTIFY, and its event',
        30_000,
      );
    } finally {
      await hub.stop();
      await activity.end();
    }
    const read = withMetric('ListenerLag')[0]!;
    expect(read._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service']]);
    expect(read).toMatchObject({ ListenerReads: 1, ListenerHeartbeat: 1 });
    expect(read.ListenerNotifications).toBeGreaterThanOrEqual(1);
    expect(read.ListenerLag).toBeGreaterThan(0);
    expect(read.ListenerReadTime).toBeGreaterThan(0);
    const event = withMetric('ListenerEvents').find((document) => document.kind === 'marketChanged')!;
    expect(event._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'kind']]);
    expect(names(event).sort()).toEqual([
      'ListenerEvents',
      'ListenerFailedPosts',
      'ListenerFanOutTime',
      'ListenerGoneConnections',
      'ListenerPostsSent',
      'UndeliveredPosts',
    ]);
    expect(event.ListenerPostsSent).toBeGreaterThanOrEqual(1);
    expect(event.ListenerFailedPosts).toBe(0);
  });
});

describe('fan-out function metrics', () => {
  it('reach the stack from the function’s worker thread, as Lambda’s output reaches CloudWatch: one document per shard, and /metrics', async () => {
    const before = new Set(stack.hub.connections.keys());
    const hub = await connectHub(stack.url);
    try {
      const id = [...stack.hub.connections.keys()].find((each) => !before.has(each))!;
      const shard = shardOf(id);
      // $default marks the connection ready just after answering the handshake: from then on shard reads return it.
      await waitFor(async () => {
        for await (const page of connectionStore().shard(shard)) if (page.includes(id)) return true;
        return false;
      }, 'the connection ready in its shard');
      const sent = stack.metrics.series('ListenerPostsSent', { service, kind: 'marketChanged' }).sum;
      // Invoked as the listener hands a shard out, through the local Lambda service, which runs the function in a worker thread.
      const delivery = await functionShards(
        localFanOutFunction,
        stack.url,
      )({ event: `marketChanged#${Date.now()}`, shard, frame: marketChangedMessage({ count: 5, maxBlock: '55', version: 1 }) });
      expect(delivery.sent).toBeGreaterThanOrEqual(1);
      await waitFor(() => withMetric('FanOutShardTime').length === 1, 'the shard’s document');
      const [document] = withMetric('FanOutShardTime');
      expect(document!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'kind']]);
      expect(document).toMatchObject({ kind: 'marketChanged', FanOutSkippedPosts: 0, ListenerFailedPosts: 0, UndeliveredPosts: 0 });
      expect(document!.ListenerPostsSent).toBeGreaterThanOrEqual(1);
      expect(stack.metrics.series('ListenerPostsSent', { service, kind: 'marketChanged' }).sum).toBe(sent + (document!.ListenerPostsSent as number));
      expect(await (await fetch(`${stack.url}/metrics`)).text()).toContain(
        'hatchery_fan_out_shard_time_milliseconds_count{kind="marketChanged",service="hatchery"}',
      );
    } finally {
      await hub.stop();
    }
  });
});

describe('while the database is down', () => {
  it('counts a 503 as a 5xx and a 503 while the database is down, and the database time spent finding out', async () => {
    await stack.postgres!.stop();
    try {
      expect((await call(stack, 'GET', '/transparency/sales')).status).toBe(503);
    } finally {
      await stack.postgres!.start();
    }
    await waitFor(() => byRoute('GET /transparency/sales').length === 1, 'the EMF document of the 503');
    expect(byRoute('GET /transparency/sales')[0]).toMatchObject({ Requests: 1, Responses5xx: 1, Responses503: 1 });
    expect(byRoute('GET /transparency/sales')[0]).not.toHaveProperty('Responses4xx');
    expect(byRoute('GET /transparency/sales')[0]!.DatabaseTime).toBeGreaterThan(0);
  });
});
