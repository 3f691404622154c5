import { describe, expect, it } from 'vitest';
import { deliveryDeadlines } from '@hatchery/platform/aws/deadlines';
import { parseDoc } from '../../support/docs';

/** docs/realtime.md's delivery rules against the one declaration of the hub's deadlines and retries (platform/aws/deadlines.ts). */
const text = parseDoc('docs/realtime.md').text.replace(/\s+/g, ' ');
const spelled = ['never', 'once', 'twice', '3 times', '4 times'];

describe('docs/realtime.md', () => {
  it('states the deadlines and retries the hub and the listener work by', () => {
    expect(text).toContain(`a shard stops posting ${deliveryDeadlines.shardStopMarginMs / 1000} seconds before its timeout`);
    expect(text).toContain(`until its shard's deadline (${deliveryDeadlines.targetedMs / 1000} s for a \`forgeFulfilled\`)`);
    expect(text).toContain(`when the budget next allows, up to ${spelled[deliveryDeadlines.broadcastRepeats]},`);
    expect(text).toContain(`The listener tries a failed invocation again, ${spelled[deliveryDeadlines.shardRetries]}.`);
  });
});
