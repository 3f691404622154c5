import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium: playwright's own browser download cannot work on these machines. */
export const chromiumPath = '/usr/bin/chromium';
export const hasChromium = existsSync(chromiumPath);
/** In the test's name, so a skipped run says how to run it. */
export const needsChromium = hasChromium ? '' : ' [skipped: no Chromium; install it with `apt-get install -y chromium`]';
/** Git-ignored; screenshots are for people to look at. */
export const screenshotDir = join(import.meta.dirname, '..', '.screenshots');

/** Headless, with a fresh profile and the flags that keep Chromium off the network (these machines have none). */
export async function launchChromium(): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), 'hatchery-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  await mkdir(screenshotDir, { recursive: true });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
