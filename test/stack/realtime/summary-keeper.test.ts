import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { keepSummary, nextSumAt } from '@hatchery/listener/summary';

const timing = { changedMs: 1_000, maxIntervalMs: 4_000 };

describe('when the listener sums the summary', () => {
  it('at once in a new term, then one change interval after a sum began once a table changed, else the longest interval', () => {
    expect(nextSumAt(undefined, false, timing)).toBe(Number.NEGATIVE_INFINITY);
    expect(nextSumAt(500, true, timing)).toBe(1_500);
    expect(nextSumAt(500, false, timing)).toBe(4_500);
  });
});

describe('the listener’s summary keeper', () => {
  /** The session's statements (each a sum, stored), answered at once or failed as `fail` says. */
  let sums: number[];
  let fail: boolean;
  let outcomes: string[];
  const session = {
    query: async (text: string) => {
      expect(text).toContain('INSERT INTO hatchery.summary');
      sums.push(Date.now());
      if (fail) throw new Error('no database');
      return { rows: [] };
    },
  };
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  const keeper = () => keepSummary({ session: session as never, timing, log, summed: (outcome) => outcomes.push(outcome), now: () => Date.now() });

  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
    sums = [];
    fail = false;
    outcomes = [];
    warnings.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('sums at once, then at least every longest interval with no change', async () => {
    const kept = keeper();
    await vi.advanceTimersByTimeAsync(0);
    expect(sums).toEqual([0]);
    await vi.advanceTimersByTimeAsync(9_000);
    expect(sums).toEqual([0, 4_000, 8_000]);
    expect(outcomes).toEqual(['stored', 'stored', 'stored']);
    await kept.stop();
  });

  it('sums a change once the change interval since the last sum has passed, however many notifications name it', async () => {
    const kept = keeper();
    await vi.advanceTimersByTimeAsync(200);
    for (let i = 0; i < 50; i++) kept.changed();
    await vi.advanceTimersByTimeAsync(799);
    expect(sums).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(sums).toEqual([0, 1_000]);
    // Long after the last sum, a change is summed at once.
    await vi.advanceTimersByTimeAsync(3_500);
    kept.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(sums).toEqual([0, 1_000, 4_500]);
    await kept.stop();
  });

  it('logs a failure, tries again one change interval later, and carries on', async () => {
    fail = true;
    const kept = keeper();
    await vi.advanceTimersByTimeAsync(1_500);
    fail = false;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(sums).toEqual([0, 1_000, 2_000]);
    expect(outcomes).toEqual(['failed', 'failed', 'stored']);
    expect(warnings).toEqual(['the transparency summary could not be summed; trying again', 'the transparency summary could not be summed; trying again']);
    await kept.stop();
  });

  it('keeps summing when its timers fire before its clock says a sum is due', async () => {
    const kept = keepSummary({ session: session as never, timing, log, summed: (outcome) => outcomes.push(outcome), now: () => Date.now() * 0.999 });
    await vi.advanceTimersByTimeAsync(9_000);
    expect(sums).toHaveLength(3);
    await kept.stop();
  });

  it('starts no sum once stopped', async () => {
    const kept = keeper();
    await vi.advanceTimersByTimeAsync(0);
    await kept.stop();
    kept.changed();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(sums).toEqual([0]);
  });
});
