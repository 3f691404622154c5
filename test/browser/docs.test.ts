import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSizes } from '@hatchery/local/demo-data';
import { startTestStack, type TestStack } from '../support/stack';
import { hasChromium, launchChromium, needsChromium, type Browser } from './chromium';

/**
 * A guard, not a measure: Swagger UI's bundle parses and renders slowly beside a loaded machine's other tests. A step
 * that never ends fails within it, naming its locator (stepTimeout).
 */
const guard = 90_000;
const stepTimeout = 60_000;

/** The API explorer in a real browser. */
describe.skipIf(!hasChromium)(`/docs in Chromium${needsChromium}`, () => {
  let stack: TestStack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startTestStack({ demoData: demoSizes.demo }), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('renders every operation of /openapi.json, from /docs and /docs/', { timeout: guard }, async () => {
    const document = (await (await stack.get('/openapi.json')).json()) as { paths: Record<string, Record<string, { operationId: string }>> };
    const operationIds = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(operationIds.length).toBeGreaterThan(10);

    const page = await browser.newPage();
    page.setDefaultTimeout(stepTimeout);
    const failed: string[] = [];
    page.on('requestfailed', (request) => failed.push(request.url()));
    await page.goto(`${stack.url}/docs/`);
    expect(page.url()).toBe(`${stack.url}/docs`);
    await page.locator('.opblock').first().waitFor();
    const rendered = await page.locator('.opblock').evaluateAll((blocks) => blocks.map((block) => block.id));
    expect(rendered.map((id) => id.split('-').at(-1)).sort()).toEqual([...operationIds].sort());
    await browser.screenshot(page, 'docs');
    expect(failed).toEqual([]);
    await page.close();
  });

  it('"Try it out" on a list endpoint shows a 200 and the page of data', { timeout: guard }, async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(stepTimeout);
    await page.goto(`${stack.url}/docs#/accounts/listAccountNfts`);
    const operation = page.locator('#operations-accounts-listAccountNfts');
    await operation.locator('.try-out__btn').click();
    // The address is prefilled with the documented example wallet, which owns NFTs in the demo data.
    await operation.locator('input[placeholder="filter"]').fill('staked=true');
    await operation.locator('.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    expect((await status.innerText()).trim()).toBe('200');
    const body = JSON.parse(await operation.locator('.live-responses-table .response-col_description .microlight').first().innerText()) as {
      items: Array<{ staked: boolean }>;
      totalCount: number;
    };
    expect(body.totalCount).toBeGreaterThan(0);
    expect(body.items.every((item) => item.staked)).toBe(true);
    await operation.scrollIntoViewIfNeeded();
    await browser.screenshot(page, 'docs-try-it');
    await page.close();
  });
});
