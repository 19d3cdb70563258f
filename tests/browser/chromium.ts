/** Headless Debian Chromium for the browser tests (playwright-core drives it; `.ci/run` installs it when missing). */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { testArtifactsDir, type Availability } from '@switchyard/testing';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Flags besides `--headless` (Playwright's `headless: true`) and a fresh `--user-data-dir` (`launchPersistentContext`,
 * which refuses it among the args): no sandbox (root in CI), no GPU, no QUIC, and nothing that phones home.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const chromiumAvailability = (): Availability =>
  fs.existsSync(CHROMIUM)
    ? { available: true }
    : { available: false, reason: `${CHROMIUM} is not installed (apt-get install chromium)` };

/** A browser with a profile of its own; `close()` also removes the profile. */
export async function launchChromium(viewport: {
  width: number;
  height: number;
}): Promise<{ readonly browser: BrowserContext; close(): Promise<void> }> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-chromium-'));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    timeout: 60_000,
    viewport,
  });
  return {
    browser,
    close: async () => {
      await browser.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Where a screenshot goes: the run's artifacts (CI), else a temporary folder. */
export function screenshotPath(name: string): string {
  const artifacts = testArtifactsDir();
  const dir = artifacts
    ? path.join(artifacts, 'screenshots')
    : fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-screenshots-'));
  fs.mkdirSync(dir, { recursive: true });
  return path.join(dir, `${name}-${process.pid}.png`);
}
