import http from 'node:http';
import { recoverMessageAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { verifyIdToken } from '@hatchery/functions/middleware/authenticate';
import type { BenchSection } from './context';
import { httpGet, measure, printTable, type Figures } from './measure';

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

/** One JSON request over a keep-alive agent; any status but 200 is an error, so errors are counted, not timed. */
function httpJson<T>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (payload) headers['content-type'] = 'application/json';
    const request = http.request(url, { method, agent, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (response.statusCode === 200) resolve(JSON.parse(text) as T);
        else reject(new Error(`${response.statusCode}: ${text.slice(0, 200)}`));
      });
    });
    request.on('error', reject);
    request.end(payload);
  });
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Like measure(), but for a fixed number of operations, each consuming one prepared input (a link flow needs a new account every time). */
async function measureEach<I>(inputs: I[], operation: (input: I) => Promise<unknown>, concurrency: number): Promise<Figures> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < inputs.length) {
        const input = inputs[next++]!;
        const t0 = performance.now();
        try {
          await operation(input);
          latencies.push(performance.now() - t0);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, rps: latencies.length / elapsed, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), errors };
}

/**
 * GET /accounts/me beside the JWT verification alone, and a whole wallet link
 * (nonce → sign → link, for a new account each time) beside the signature recovery alone.
 */
export const accountsBench: BenchSection = async ({ stack, concurrency, durationMs }) => {
  const token = await stack.idp.signToken({ uid: 'bench-me', email: 'bench-me@example.com', name: 'Bench Me' });
  const meUrl = `${stack.url}/accounts/me`;
  await httpGet(meUrl, { authorization: `Bearer ${token}` });
  const me = await measure(() => httpGet(meUrl, { authorization: `Bearer ${token}` }), { concurrency, durationMs });
  const verify = await measure(() => verifyIdToken(token), { concurrency, durationMs });
  printTable('Accounts: GET /accounts/me', [
    {
      name: 'GET /accounts/me (bearer token)',
      gateway: me,
      baseline: verify,
      baselineName: `the JWT verification alone (aws-jwt-verify, JWKS cached), in-process, concurrency ${concurrency}`,
    },
  ]);

  const flows = Number(process.env.BENCH_LINK_FLOWS ?? 400);
  const inputs: Array<{ token: string; wallet: PrivateKeyAccount }> = [];
  for (let i = 0; i < flows; i++) {
    const uid = `bench-link-${i}`;
    inputs.push({
      token: await stack.idp.signToken({ uid, email: `${uid}@example.com`, name: `Bench ${i}` }),
      wallet: privateKeyToAccount(generatePrivateKey()),
    });
  }
  const link = await measureEach(
    inputs,
    async ({ token, wallet }) => {
      const challenge = await httpJson<{ message: string }>('POST', `${stack.url}/accounts/me/wallet/nonce`, token);
      const signature = await wallet.signMessage({ message: challenge.message });
      await httpJson('POST', `${stack.url}/accounts/me/wallet`, token, { address: wallet.address, signature });
    },
    concurrency,
  );
  const sample = inputs[0]!;
  const message = 'Link this wallet to your Hatchery account\n\nAccount: bench\nNonce: 00000000000000000000000000000000\nIssued At: 2026-01-01T00:00:00Z';
  const signature = await sample.wallet.signMessage({ message });
  const recover = await measure(() => recoverMessageAddress({ message, signature }), { concurrency, durationMs });
  printTable('Accounts: wallet link flow', [
    {
      name: `nonce → sign → link, new account (${flows})`,
      gateway: link,
      baseline: recover,
      baselineName: `the signature recovery alone (viem recoverMessageAddress), in-process, concurrency ${concurrency}`,
    },
  ]);
};
