import { describe, expect, it } from 'vitest';
import { requestTime } from '@hatchery/local/gateway/request-time';

describe('the request time of the local gateway’s events', () => {
  it('is written as API Gateway writes it, in UTC, and follows the clock from one second to the next', () => {
    const at = Date.UTC(2020, 2, 12, 19, 3, 58, 390);
    expect(requestTime(at)).toBe('12/Mar/2020:19:03:58 +0000');
    expect(requestTime(at + 600)).toBe('12/Mar/2020:19:03:58 +0000');
    expect(requestTime(at + 610)).toBe('12/Mar/2020:19:03:59 +0000');
    expect(requestTime(Date.UTC(2021, 0, 5, 4, 0, 7))).toBe('05/Jan/2021:04:00:07 +0000');
  });
});
