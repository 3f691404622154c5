import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Freshness } from '@hatchery/core/indexer/freshness';
import { finalizedBlockHeader, indexedBlockHeader, safeBlockHeader } from '@hatchery/core/indexer/names';
import { indexedRead } from '@hatchery/functions/middleware/indexed-block';
import type { HttpResult } from '@hatchery/functions/middleware/types';
import { httpRequest, thrownBy, type HttpRequest } from './requests';

/**
 * The indexed reads' position headers and minBlock wait, on Middy's request.
 * The position is read from Ponder's tables in PostgreSQL; here the two
 * cached reads of it (the instance's, and the one minBlock polls) read an
 * index held in memory instead, through core's own cache, on a clock the
 * test moves.
 */
const index = vi.hoisted(() => ({
  /** What a read of the index answers now: a block, 'unknown' (no Ponder tables), a database that does not answer, or another failure. */
  answer: 'unknown' as bigint | 'unknown' | 'unavailable' | 'fails',
  now: 0,
  reads: { current: 0, polled: 0 },
}));

vi.mock('@hatchery/core/indexer/freshness-read', async () => {
  const { cachedFreshness } = await import('@hatchery/core/indexer/freshness');
  return {
    currentFreshness: cachedFreshness(
      () => read('current'),
      1_000,
      () => index.now,
    ),
  };
});
vi.mock('@hatchery/core/indexer/min-block-read', async () => {
  const { cachedFreshness } = await import('@hatchery/core/indexer/freshness');
  return {
    polledFreshness: cachedFreshness(
      () => read('polled'),
      200,
      () => index.now,
    ),
  };
});

async function read(which: 'current' | 'polled'): Promise<Freshness> {
  index.reads[which]++;
  const { answer } = index;
  if (answer === 'unavailable') throw new Error('Query read timeout');
  if (answer === 'fails') throw Object.assign(new Error('permission denied for table _ponder_checkpoint'), { code: '42501' });
  if (answer === 'unknown') return 'unknown';
  const chain = {
    chainId: 8453,
    block: String(answer),
    safeBlock: String(answer - 2n),
    finalizedBlock: String(answer - 10n),
    blockTimestamp: '2030-01-01T00:00:00.000Z',
    lagSeconds: 1,
    ready: true,
  };
  return { chains: [chain] };
}

const headersAt = (block: bigint) => ({
  [indexedBlockHeader]: `8453=${block}`,
  [safeBlockHeader]: `8453=${block - 2n}`,
  [finalizedBlockHeader]: `8453=${block - 10n}`,
});

beforeEach(() => {
  index.answer = 'unknown';
  // Past every cached read of the test before.
  index.now += 60_000;
  index.reads = { current: 0, polled: 0 };
});

const ok = (): HttpResult => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' });

/** A request through `report`'s before, the handler's answer, then its after. */
async function answered(
  read: ReturnType<typeof indexedRead>,
  response: HttpResult,
  { minBlock, duringHandler }: { minBlock?: string; duringHandler?: () => void } = {},
) {
  const request: HttpRequest = httpRequest();
  request.context.input = { query: minBlock === undefined ? {} : { minBlock }, params: undefined, body: undefined };
  await read.report.before!(request);
  await read.minBlock.before!(request);
  duringHandler?.();
  request.response = response;
  await read.report.after!(request);
  return request.response!;
}

describe('indexedRead().report', () => {
  it('puts the indexed, safe and finalized blocks on a success', async () => {
    index.answer = 100n;
    expect((await answered(indexedRead(), ok())).headers).toEqual({ 'content-type': 'application/json', ...headersAt(100n) });
  });

  it('puts none on anything but a 200', async () => {
    index.answer = 100n;
    for (const statusCode of [304, 404, 409, 503]) {
      const answer = await answered(indexedRead(), { statusCode, headers: { 'cache-control': 'no-store' } });
      expect(answer.headers, String(statusCode)).toEqual({ 'cache-control': 'no-store' });
    }
  });

  it('says what was read before the handler ran, never more than the answer holds', async () => {
    index.answer = 100n;
    const answer = await answered(indexedRead(), ok(), {
      duringHandler: () => {
        index.answer = 105n;
        index.now += 5_000;
      },
    });
    expect(answer.headers).toMatchObject(headersAt(100n));
  });

  it('reads the position once per cache interval, and sets a known one without making Middy wait on a promise', async () => {
    index.answer = 100n;
    const read = indexedRead();
    await answered(read, ok());
    const request = httpRequest();
    expect(read.report.before!(request)).toBeUndefined();
    expect(index.reads.current).toBe(1);
  });

  it('answers as ever, without the headers, when the position is unknown or cannot be read', async () => {
    index.answer = 'unknown';
    expect((await answered(indexedRead(), ok())).headers).toEqual({ 'content-type': 'application/json' });
    index.now += 60_000;
    index.answer = 'fails';
    expect((await answered(indexedRead(), ok())).headers).toEqual({ 'content-type': 'application/json' });
  });

  it('is unavailable at once when the database does not answer the position: the read would wait on it too', async () => {
    index.answer = 'unavailable';
    const request = httpRequest();
    await expect(indexedRead().report.before!(request)).rejects.toThrow('Query read timeout');
  });
});

describe('indexedRead().minBlock', () => {
  it('waits for nothing, and reads nothing, for a request without minBlock', async () => {
    index.answer = 100n;
    const request = httpRequest();
    request.context.input = { query: {}, params: undefined, body: undefined };
    expect(indexedRead().minBlock.before!(request)).toBeUndefined();
    expect(index.reads).toEqual({ current: 0, polled: 0 });
  });

  it("lets a block the index has reached through at once, on the instance's shared position", async () => {
    index.answer = 100n;
    const answer = await answered(indexedRead(), ok(), { minBlock: '8453:100' });
    expect(answer.headers).toMatchObject(headersAt(100n));
    expect(index.reads).toEqual({ current: 1, polled: 0 });
  });

  it('polls for a block ahead, and its answer’s headers are what the wait saw: that block or later', async () => {
    index.answer = 100n;
    const read = indexedRead();
    const request: HttpRequest = httpRequest();
    request.context.input = { query: { minBlock: '102' }, params: undefined, body: undefined };
    await read.report.before!(request);
    const waiting = read.minBlock.before!(request) as Promise<void>;
    // The index moves on while the request waits; the next poll, an interval on, sees it.
    index.answer = 103n;
    index.now += 200;
    await waiting;
    request.response = ok();
    await read.report.after!(request);
    expect(request.response.headers).toMatchObject(headersAt(103n));
    expect(index.reads).toEqual({ current: 1, polled: 1 });
  });

  it('refuses a minBlock it cannot check, with 409 and Retry-After, when the position is unknown', async () => {
    index.answer = 'unknown';
    const request = httpRequest();
    request.context.input = { query: { minBlock: '5' }, params: undefined, body: undefined };
    expect(await thrownBy(indexedRead().minBlock.before, request)).toMatchObject({ kind: 'notIndexedYet', headers: { 'retry-after': '1' } });
  });
});
