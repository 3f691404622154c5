import { describe, expect, it } from 'vitest';
import { attemptBoundMs, databaseLimits, retryDelayMs } from '@hatchery/core/db';

describe('database retries', () => {
  it('keep their delays within the limit', () => {
    const delays = Array.from({ length: databaseLimits.transientRetries }, (_, attempt) => retryDelayMs(attempt));
    expect(Math.max(...delays)).toBeLessThanOrEqual(databaseLimits.transientMaxDelayMs);
  });

  // That this bound fits each deployed function's timeout is asserted on the deployed functions (test/deploy/deploy.test.ts).
  it('bound a unit of work by unavailableWithinMs', () => {
    expect(attemptBoundMs).toBeLessThanOrEqual(databaseLimits.unavailableWithinMs);
  });
});
