// Takes the README's screenshot of procmodel studio: the whole page (tree, properties,
// viewport, status line) on a running server, in Debian's headless chromium.
//   STUDIO_URL=http://127.0.0.1:PORT/ OUT=docs/studio.png node screenshot.mjs
import { chromium } from 'playwright-core';

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true });
const page = await browser.newPage({ viewport: { width: 1280, height: 760 }, deviceScaleFactor: 1 });
await page.goto(process.env.STUDIO_URL);
await page.waitForFunction(() => window.__studio && window.__studio.state && window.__studio.stats.frames > 5, null, { timeout: 30000 });
await page.waitForTimeout(500);
await page.screenshot({ path: process.env.OUT });
await browser.close();
