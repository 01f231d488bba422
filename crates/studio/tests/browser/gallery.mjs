// Renders one scene of procmodel studio to a PNG through the studio's own viewport (three.js,
// WebGL) in Debian's headless chromium: the page with only its viewport showing, the model
// seen from above (the camera up 2 for 1 along X and Z), framed to fill the picture, the grid and helpers
// hidden. Started by crates/cli/tests/gallery.rs:
//   STUDIO_URL     the running studio's page
//   OUT            where the PNG goes
//   EXPECT_TERRAIN "1": wait for Workspace.Terrain's mesh as well as the parts
//   WIDTH, HEIGHT  the picture's size (640×400)
// Prints one JSON line: parts, terrain triangles and the page's own pixel sample.
import { chromium } from 'playwright-core';

const width = Number(process.env.WIDTH || 640), height = Number(process.env.HEIGHT || 400);
const terrain = process.env.EXPECT_TERRAIN === '1';
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true });
try {
  const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: 1 });
  page.on('pageerror', (e) => { console.error('[page error]', e.message); process.exitCode = 1; });
  await page.goto(process.env.STUDIO_URL);
  // Only the viewport: no toolbar, tree, properties or status line.
  await page.addStyleTag({ content: '#toolbar, #tree, #properties, #output, #status, #toast { display: none !important; } #viewport { position: fixed; inset: 0; }' });
  // Settled: nothing generating, every model generated without error, parts (and terrain) drawn.
  await page.waitForFunction((terrain) => {
    const st = window.__studio;
    if (!st || !st.state || st.state.busy || st.stats.frames < 3) return false;
    if (st.state.models.some((m) => m.error)) return true;
    return (st.state.parts > 0 || st.stats.terrain.triangles > 0) && (!terrain || st.stats.terrain.triangles > 0);
  }, terrain, { timeout: 120000 });
  const failed = await page.evaluate(() => window.__studio.state.models.filter((m) => m.error).map((m) => m.error));
  if (failed.length) throw new Error(`a model failed: ${failed.join('; ')}`);
  await page.evaluate(() => { window.__studio.select(null); window.__studio.hideHelpers(true); window.__studio.fit(0.85, [1, 2, 1]); });
  await page.waitForTimeout(300);
  const sample = await page.evaluate(() => window.__studio.sample());
  await page.locator('canvas').screenshot({ path: process.env.OUT, animations: 'disabled' });
  const stats = await page.evaluate(() => ({ parts: window.__studio.state.parts, terrainTriangles: window.__studio.stats.terrain.triangles }));
  console.log(JSON.stringify({ ...stats, ...sample }));
} finally {
  await browser.close();
}
