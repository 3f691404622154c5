import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium: the tool's own browser download cannot work on these machines. */
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
/** Shown in the name of every browser test, so a skipped run says how to run it. */
export const needsChromium = hasChromium ? '' : ' [skipped: no Chromium; install it with `apt-get install -y chromium`]';
if (!hasChromium) console.warn(`Browser tests skipped: ${chromiumPath} is missing. Install Debian's Chromium with: apt-get install -y chromium`);

/** Git-ignored; the screenshots are for people to look at. */
export const screenshotDir = join(import.meta.dirname, '..', '.screenshots');

export interface Browser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  screenshot(page: Page, name: string): Promise<string>;
  close(): Promise<void>;
}

/** Headless, with a fresh profile and every flag that keeps Chromium off the network (this machine has none). */
export async function launchChromium(): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'hatchery-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  await mkdir(screenshotDir, { recursive: true });
  return {
    context,
    newPage: () => context.newPage(),
    screenshot: async (page, name) => {
      const path = join(screenshotDir, `${name}.png`);
      await page.screenshot({ path, fullPage: false });
      return path;
    },
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
