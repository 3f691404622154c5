import { expect, it } from 'vitest';
import { exampleWallet } from '@hatchery/functions/schemas';
import { demoAddress } from '@hatchery/local/demo-data';

it('gives the explorer’s example wallet as demo wallet 11', () => {
  expect(exampleWallet).toBe(demoAddress(11));
});
