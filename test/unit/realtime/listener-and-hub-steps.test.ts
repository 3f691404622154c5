import { describe, expect, it } from 'vitest';
import { advanceCursor, marketChange, type Fulfilment } from '@hatchery/core/realtime/changes';
import { forgeFulfilledMessage, marketChangedMessage } from '@hatchery/core/realtime/events';
import { repliesAsPosts } from '@hatchery/core/realtime/hub';
import { messages, parseRecord, splitRecords } from '@hatchery/platform/signalr/protocol';
import { coalesce, latestOnly } from '@hatchery/listener/coalesce';
import { forEachBounded } from '@hatchery/core/realtime/fan-out';
import { resumeFrom } from '@hatchery/listener/state';

const fulfilment = (requestId: string, block: string): Fulfilment => ({ requestId, block, buyer: '0xb', tokenId: `9${requestId}`, editionId: '1' });

describe('the forge cursor', () => {
  it('reports a fulfilment committed later into a block it has already seen, and nothing twice', () => {
    let cursor = { block: '10', seen: ['1'] };
    const first = advanceCursor(cursor, [fulfilment('1', '10'), fulfilment('2', '10')]);
    expect(first.fresh.map((row) => row.requestId)).toEqual(['2']);
    cursor = first.cursor;
    expect(cursor).toEqual({ block: '10', seen: ['1', '2'] });
    const again = advanceCursor(cursor, [fulfilment('1', '10'), fulfilment('2', '10')]);
    expect(again.fresh).toEqual([]);
  });

  it('moves to the newest block and remembers only what it holds', () => {
    const next = advanceCursor({ block: '10', seen: ['1'] }, [fulfilment('1', '10'), fulfilment('3', '11'), fulfilment('4', '12'), fulfilment('5', '12')]);
    expect(next.fresh.map((row) => row.requestId)).toEqual(['3', '4', '5']);
    expect(next.cursor).toEqual({ block: '12', seen: ['4', '5'] });
  });

  it('compares blocks as integers beyond 2^64, not as text', () => {
    const next = advanceCursor({ block: '9', seen: [] }, [fulfilment('1', '18446744073709551617')]);
    expect(next.cursor.block).toBe('18446744073709551617');
  });
});

describe('marketChanged detection', () => {
  it('sends on the first read and on a different snapshot, never for a missing table', () => {
    const a = { count: 2, maxBlock: '7' };
    expect(marketChange(undefined, a)).toEqual(a);
    expect(marketChange(undefined, 'absent')).toBeUndefined();
    expect(marketChange(a, { ...a })).toBeUndefined();
    expect(marketChange(a, { count: 2, maxBlock: '8' })).toEqual({ count: 2, maxBlock: '8' });
    expect(marketChange(a, 'absent')).toBeUndefined();
    expect(marketChange('absent', { count: 0, maxBlock: '0' })).toBeUndefined();
    expect(marketChange('absent', a)).toEqual(a);
  });
});

describe('hub protocol records', () => {
  it('splits a message into records and rejects an unterminated one', () => {
    expect(splitRecords('{"type":6}\u001e{"type":6}\u001e')).toEqual(['{"type":6}', '{"type":6}']);
    expect(splitRecords('{"type":6}')).toBeUndefined();
  });

  it('tells handshakes, invocations, pings and closes apart', () => {
    expect(parseRecord('{"protocol":"json","version":1}')).toEqual({ kind: 'handshake', protocol: 'json', version: 1 });
    expect(parseRecord('{"type":1,"invocationId":"0","target":"Subscribe","arguments":["x"]}')).toEqual({
      kind: 'invocation',
      invocationId: '0',
      target: 'Subscribe',
      args: ['x'],
      stream: false,
    });
    expect(parseRecord('{"type":6}')).toEqual({ kind: 'ping' });
    expect(parseRecord('{"type":7,"error":"bye"}')).toEqual({ kind: 'close' });
    expect(parseRecord('{"type":8,"sequenceId":1}')).toEqual({ kind: 'ignored' });
    expect(parseRecord('{"type":1,"target":"","arguments":[]}').kind).toBe('malformed');
    expect(parseRecord('{"protocol":"json"}').kind).toBe('malformed');
  });

  it('frames events as invocations without an id, leaving out absent fields', () => {
    expect(marketChangedMessage({ count: 3, maxBlock: '99', version: 1 })).toBe(
      '{"type":1,"target":"marketChanged","arguments":[{"count":3,"maxBlock":"99","version":1}]}\u001e',
    );
    expect(forgeFulfilledMessage({ requestId: '1', buyer: `0x${'a'.repeat(40)}`, sequence: 4 })).toBe(
      `{"type":1,"target":"forgeFulfilled","arguments":[{"requestId":"1","buyer":"0x${'a'.repeat(40)}","sequence":4}]}\u001e`,
    );
  });
});

describe('coalescing reads', () => {
  it('folds every trigger that arrives during a run into one more run', async () => {
    let runs = 0;
    let release!: () => void;
    const reads = coalesce(async () => {
      runs++;
      if (runs === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    reads.trigger();
    for (let i = 0; i < 10_000; i++) reads.trigger();
    release();
    await reads.idle();
    expect(runs).toBe(2);
    reads.trigger();
    await reads.idle();
    expect(runs).toBe(3);
  });
});

describe('the broadcast lane', () => {
  it('sends only the newest value pushed while a run is under way, and one offered again only if nothing newer waits', async () => {
    const sent: string[] = [];
    let release!: () => void;
    const lane = latestOnly(async (value: string) => {
      sent.push(value);
      if (value === 'first') await new Promise<void>((resolve) => (release = resolve));
      if (value === 'first') lane.offer('first again');
      if (value === 'third') lane.offer('third again');
    });
    lane.push('first');
    await new Promise((resolve) => setImmediate(resolve));
    lane.push('second');
    lane.push('third');
    release();
    await lane.idle();
    expect(sent).toEqual(['first', 'third', 'third again']);
  });
});

describe('bounded fan-out', () => {
  it('never has more than the limit in flight and reaches every item across pages', async () => {
    async function* pages() {
      for (let page = 0; page < 5; page++) yield Array.from({ length: 30 }, (_, i) => page * 30 + i);
    }
    let inFlight = 0;
    let peak = 0;
    const seen: number[] = [];
    await forEachBounded(pages(), 7, async (item) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      seen.push(item);
      inFlight--;
    });
    expect(peak).toBe(7);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });
});

describe('resuming after a failover', () => {
  it('takes the newest saved or remembered state unless it is too old', () => {
    const older = { readAt: 1_000, cursor: { block: '1', seen: [] } };
    const newer = { readAt: 2_000, cursor: { block: '2', seen: [] } };
    expect(resumeFrom(older, newer, 2_500, 1_000)).toBe(newer);
    expect(resumeFrom(newer, older, 2_500, 1_000)).toBe(newer);
    expect(resumeFrom(newer, undefined, 5_000, 1_000)).toBeUndefined();
    expect(resumeFrom(undefined, undefined, 0, 1_000)).toBeUndefined();
  });
});

describe('replies as management-API posts', () => {
  const reply = (id: number) => messages.completion(String(id).padStart(4, '0'));
  const size = Buffer.byteLength(reply(0));
  const replies = Array.from({ length: 10 }, (_, i) => reply(i));

  it('joins replies into one post when they fit exactly, and splits in order one byte below that', () => {
    expect(repliesAsPosts({ replies, close: false, handshaken: false }, 10 * size)).toEqual({ replies: [replies.join('')], close: false, handshaken: false });
    const split = repliesAsPosts({ replies, close: true, handshaken: false }, 10 * size - 1);
    expect(split).toEqual({ replies: [replies.slice(0, 9).join(''), replies[9]], close: true, handshaken: false });
    expect(repliesAsPosts({ replies, close: false, handshaken: false }, 3 * size).replies).toEqual(
      [0, 3, 6, 9].map((start) => replies.slice(start, start + 3).join('')),
    );
  });

  it('counts bytes, not characters', () => {
    const wide = [messages.completion('é'), messages.completion('é')];
    const bytes = Buffer.byteLength(wide[0]!);
    expect(wide[0]!.length).toBeLessThan(bytes);
    expect(repliesAsPosts({ replies: wide, close: false, handshaken: false }, 2 * bytes - 1).replies).toHaveLength(2);
  });

  it('closes with an error in place of a reply that no post can carry, after the replies before it', () => {
    const outcome = repliesAsPosts({ replies: [reply(1), messages.completion('x'.repeat(200)), reply(2)], close: false, handshaken: false }, 100);
    expect(outcome.close).toBe(true);
    expect(outcome.replies).toHaveLength(2);
    expect(outcome.replies[0]).toBe(reply(1));
    expect(JSON.parse(outcome.replies[1]!.slice(0, -1))).toMatchObject({ type: 7, error: expect.stringMatching(/exceeds the message size limit/) });
  });
});
