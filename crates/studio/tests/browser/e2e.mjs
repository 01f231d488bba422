// End-to-end test of procmodel studio in Debian's headless chromium (playwright-core, no
// browser download). Started by crates/studio/tests/browser.rs with the server running:
//   STUDIO_URL   the page          STUDIO_FILE  the generator file (edited by rename here)
//   OUT_DIR      screenshots and latency.json (under target/)
//   PHASE        "main" (everything), "reload" (a saved scene opened again; EXPECT_PARTS)
//                or "terrain" (a place with Workspace.Terrain)
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const url = process.env.STUDIO_URL + '?test=1';
const file = process.env.STUDIO_FILE;
const out = process.env.OUT_DIR;
const phase = process.env.PHASE || 'main';
fs.mkdirSync(out, { recursive: true });

const log = (...a) => console.log('[e2e]', ...a);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', headless: true });
const context = await browser.newContext({ viewport: { width: 900, height: 600 }, deviceScaleFactor: 1 });

async function open() {
  const page = await context.newPage();
  page.on('pageerror', (e) => { console.error('[page error]', e.message); process.exitCode = 1; });
  await page.goto(url);
  await page.waitForFunction(() => window.__studio && window.__studio.state && window.__studio.stats.frames > 2, null, { timeout: 30000 });
  return page;
}
const parts = (page) => page.evaluate(() => window.__studio.state.parts);
const waitParts = (page, n, timeout = 30000) =>
  page.waitForFunction((n) => window.__studio.state && window.__studio.state.parts === n, n, { timeout });
const model = (page) => page.evaluate(() => window.__studio.state.models[0]);

/// A rename-style save, as vim and helix do: write a temp file, rename it over the original.
function renameSave(text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.tmp${Date.now()}`);
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/// Structural screenshot check: PNG signature and size, drawn pixels from the page's sampler.
async function screenshot(page, name) {
  const p = path.join(out, `${name}.png`);
  await page.locator('canvas').screenshot({ path: p, animations: 'disabled' });
  const png = fs.readFileSync(p);
  assert.equal(png.subarray(1, 4).toString(), 'PNG', `${name}.png is a PNG`);
  const w = png.readUInt32BE(16), h = png.readUInt32BE(20);
  assert.ok(w > 100 && h > 100, `${name}.png is ${w}x${h}`);
  await page.evaluate(() => window.__studio.hideHelpers(true));
  const s = await page.evaluate(() => window.__studio.sample());
  await page.evaluate(() => window.__studio.hideHelpers(false));
  log(`${name}: ${w}x${h}, non-background ${(s.nonBackgroundFraction * 100).toFixed(1)}%, ${s.distinctColours} colours`);
  return s;
}

function median(xs) { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; }
function p95(xs) { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] : NaN; }

/// Changes an attribute through the hook (the widgets' code path) and waits for the frame.
async function change(page, name, value) {
  return page.evaluate(async ([name, value]) => {
    const st = window.__studio;
    const seq = st.setAttribute(st.state.models[0].id, name, value);
    return await st.waitPresented(seq);
  }, [name, value]);
}

/// `n` edits of attribute `attr`, cycling through `values` (with `parts[i]` parts each);
/// every measured frame must carry its edit's geometry.
async function bench(page, label, attr, values, parts, n) {
  const rows = [];
  for (let i = 0; i < n; i++) {
    const t = await change(page, attr, values[i % values.length]);
    assert.ok(!t.error, `${label}: ${attr} = ${values[i % values.length]} was refused: ${t.error}`);
    assert.equal(t.parts, parts[i % parts.length], `${label}: the echoed frame has the edit's parts`);
    rows.push(t);
  }
  const total = rows.map((t) => t.t_presented - t.t_input);
  const server = rows.map((t) => t.server_ms);
  const r = {
    samples: n,
    total_median_ms: median(total), total_p95_ms: p95(total),
    server_median_ms: median(server), server_p95_ms: p95(server),
    gen_median_ms: median(rows.map((t) => t.gen_ms)),
    encode_median_ms: median(rows.map((t) => t.encode_ms)),
    apply_median_ms: median(rows.map((t) => t.t_applied - t.t_msg)),
    wire_median_ms: median(rows.map((t) => t.t_msg - t.t_send - t.server_ms)),
  };
  log(label, JSON.stringify(r));
  return r;
}

if (phase === 'terrain') {
  // A place with Workspace.Terrain only: its mesh is drawn, one mesh per material.
  const page = await open();
  await page.waitForFunction(() => window.__studio.stats.terrain.triangles > 0, null, { timeout: 30000 });
  const t = await page.evaluate(() => window.__studio.stats.terrain);
  assert.equal(t.parts, 2, 'Grass and Rock');
  const s = await screenshot(page, 'terrain');
  assert.ok(s.nonBackgroundFraction > 0.01, 'the terrain is drawn');
  log('terrain ok:', t.triangles, 'triangles');
  await browser.close();
  process.exit();
}

if (phase === 'reload') {
  const page = await open();
  const expect = Number(process.env.EXPECT_PARTS);
  await waitParts(page, expect);
  const m = await model(page);
  const steps = m.attributes.find((a) => a.name === 'Steps');
  assert.equal(steps.value, Number(process.env.EXPECT_STEPS), 'the saved attribute came back');
  const s = await screenshot(page, 'reloaded');
  assert.ok(s.nonBackgroundFraction > 0.01, 'the reloaded scene is drawn');
  log('reload ok:', expect, 'parts');
  await browser.close();
  process.exit();
}

// ----- open: WebGL is real and pixels are drawn ---------------------------------------
const page = await open();
const renderer = await page.evaluate(() => window.__studio.stats.renderer);
log('WebGL renderer:', renderer);
assert.ok(typeof renderer === 'string' && renderer.length > 3, 'a WebGL renderer string');
await waitParts(page, 10);
let s = await screenshot(page, 'initial');
assert.ok(s.nonBackgroundFraction > 0.01, `pixels drawn (${s.nonBackgroundFraction})`);
assert.ok(s.distinctColours > 1, 'shaded, not flat');
const tri0 = await page.evaluate(() => window.__studio.stats.triangles);

// ----- click a part in the viewport: its node is selected in the tree and outlined -------
{
  const pt = await page.evaluate(() => window.__studio.project(4));
  await page.mouse.click(pt.x, pt.y);
  const picked = await page.locator('#tree .node.selected').textContent({ timeout: 5000 });
  assert.match(picked, /^Step\d+Part/, `a step is selected, got ${picked}`);
  assert.ok(await page.evaluate(() => window.__studio.stats.selectionBox), 'the picked part is outlined');
  log('picked', picked);
}

// ----- attribute change in the properties panel → part count changes -------------------
await page.getByLabel('Steps', { exact: true }).click();
await page.getByLabel('Steps', { exact: true }).fill('20');
await page.getByLabel('Steps', { exact: true }).press('Enter');
await waitParts(page, 20);
assert.ok(await page.evaluate((t) => window.__studio.stats.triangles > t, tri0), 'more triangles');
log('attribute change: 10 -> 20 parts');
// The non-default value is marked and the CLI line reproduces it.
const m20 = await model(page);
assert.ok(m20.attributes.find((a) => a.name === 'Steps').changed);
assert.match(m20.cli, /--attr Steps=20/);
await page.getByRole('button', { name: 'Copy as CLI' }).click();
assert.match(await page.evaluate(() => window.__studio.stats.copied), /procmodel generate .* --attr Steps=20/);

// ----- undo restores, redo re-applies ---------------------------------------------------
await page.getByRole('button', { name: 'Undo' }).click();
await waitParts(page, 10);
await page.keyboard.press('Control+Shift+Z');
await waitParts(page, 20);
await page.keyboard.press('Control+Z');
await waitParts(page, 10);
// An undo generates nothing: the status line keeps the last generation's time.
{
  const [text, ms] = await page.evaluate(() => [document.getElementById('status').textContent, window.__studio.stats.generationMs]);
  assert.ok(ms > 0, `a generation time is kept (${ms})`);
  assert.match(text, new RegExp(`generation ${ms.toFixed(1).replace('.', '\\.')} ms`), text);
}
log('undo/redo ok');

// ----- a drag of a number field is one undo step ----------------------------------------
{
  const box = await page.getByLabel('Steps', { exact: true }).boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  await page.mouse.move(x, y);
  await page.mouse.down();
  for (let dx = 8; dx <= 40; dx += 8) {
    await page.mouse.move(x + dx, y);
    await page.waitForTimeout(60);
  }
  await page.mouse.up();
  await waitParts(page, 20);
  await page.getByRole('button', { name: 'Undo' }).click();
  await waitParts(page, 10);
  log('drag 10 -> 20 steps undone in one step');
}

// ----- a typed value is one undo step (Enter and the change event after it commit once) -
{
  const offsetIs = (v) => page.waitForFunction((v) => window.__studio.state.models[0].attributes
    .find((a) => a.name === 'Offset').value.join(',') === v, v, { timeout: 10000 });
  await page.evaluate(() => {
    window.__sent = [];
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (m) { window.__sent.push(String(m)); return send.call(this, m); };
  });
  const field = page.getByLabel('Offset', { exact: true });
  await field.fill('0, 5, 0');
  await field.press('Enter');
  await offsetIs('0,5,0');
  const sets = await page.evaluate(() => window.__sent.filter((m) => m.includes('"set_attribute"')).length);
  assert.equal(sets, 1, 'one edit, one message');
  await page.getByRole('button', { name: 'Undo' }).click();
  await offsetIs('0,0,0');
  log('typed Offset undone in one step');
}

// ----- bad input: an error shown, the connection and scene kept ------------------------
const errorsBefore = await page.evaluate(() => window.__studio.stats.errors.length);
await page.evaluate(() => {
  const st = window.__studio;
  st.sendRaw('{"type":"explode","seq":9001}');
  st.sendRaw('not json');
  st.send({ type: 'set_attribute', model: st.state.models[0].id, name: 'Nope', value: 1 });
  st.send({ type: 'set_attribute', model: st.state.models[0].id, name: 'Steps', value: 'NaN' });
  st.send({ type: 'set_attribute', model: 'ffffffffffffffffffffffffffffffff', name: 'Steps', value: 3 });
});
await page.waitForFunction((n) => window.__studio.stats.errors.length >= n + 5, errorsBefore);
const errors = await page.evaluate((n) => window.__studio.stats.errors.slice(n).map((e) => e.message), errorsBefore);
log('errors shown:', JSON.stringify(errors));
assert.ok(errors.some((e) => e.includes('explode')));
assert.ok(errors.some((e) => e.includes("no attribute 'Nope'")));
assert.ok(errors.some((e) => e.includes('expected a number')));
assert.ok(errors.some((e) => e.includes('stale selection')));
assert.ok(await page.locator('#toast').isVisible(), 'the error is on the page');
await change(page, 'Steps', 12);
assert.equal(await parts(page), 12, 'the connection still works');
// A value past the server's message limit is refused on the page, which stays connected.
await page.evaluate(() => { const st = window.__studio; st.setAttribute(st.state.models[0].id, 'Label', 'x'.repeat(2_000_000)); });
assert.match(await page.locator('#toast').textContent(), /not sent: .* more than the studio takes/);
await change(page, 'Steps', 13);
assert.equal(await parts(page), 13, 'still connected after an oversized edit');
await change(page, 'Steps', 12);

// ----- two pages see each other's edits -------------------------------------------------
const page2 = await open();
await waitParts(page2, 12);
await change(page2, 'Steps', 7);
await waitParts(page, 7);
log('two pages in sync');
await page2.close();

// ----- hot reload by rename; a failing generator shows its error over the ghost ---------
const original = fs.readFileSync(file, 'utf8');
renameSave(original.replace('-- FAIL HERE', 'error("the staircase broke")'));
await page.waitForFunction(() => !document.getElementById('overlay').hidden, null, { timeout: 30000 });
const overlay = await page.locator('#overlay').textContent();
log('overlay:', overlay.split('\n').slice(0, 2).join(' | '));
assert.match(overlay, /the staircase broke/);
assert.match(overlay, /:\d+/, 'the message has a line number');
assert.ok(await page.evaluate(() => window.__studio.stats.ghosts) === 7, 'the last good result is ghosted');
// The Output panel has the error too, in red, as Roblox Studio's Output window does.
await page.waitForFunction(() => [...document.querySelectorAll('#output-lines .error')].some((e) => e.textContent.includes('the staircase broke')), null, { timeout: 30000 });
await screenshot(page, 'error-ghost');
renameSave(original.replace('Steps = 10', 'Steps = 10, Extra = 1'));
await page.waitForFunction(() => document.getElementById('overlay').hidden, null, { timeout: 30000 });
await waitParts(page, 7);
log('hot reload by rename ok');

// ----- a hanging generator is cancelled from the page ----------------------------------
await page.evaluate(() => { const st = window.__studio; st.setAttribute(st.state.models[0].id, 'Hang', true); });
await page.locator('#busy').waitFor({ state: 'visible', timeout: 10000 });
await page.getByRole('button', { name: 'Cancel' }).click();
await page.waitForFunction(() => /cancelled/.test(document.getElementById('overlay').textContent), null, { timeout: 15000 });
await change(page, 'Hang', false);
await page.waitForFunction(() => document.getElementById('overlay').hidden);
log('cancel ok');

// ----- latency: staircase of 100 steps, then 10,000 parts --------------------------------
await change(page, 'Steps', 100);
const stair = await bench(page, 'staircase-100', 'Steps', [101, 100], [101, 100], 21);
const grid = await bench(page, 'grid-10000', 'Grid', [100, 99], [10000, 9801], 9);
await screenshot(page, 'grid-10000');
await change(page, 'Grid', 0);
fs.writeFileSync(path.join(out, 'latency.json'), JSON.stringify({ renderer, staircase_100: stair, parts_10000: grid }, null, 2));
// Budgets sized for software WebGL on a loaded 2-core machine (see BENCHMARKS.md).
assert.ok(stair.total_median_ms < Number(process.env.BUDGET_STAIR_MS || 2000), `staircase median ${stair.total_median_ms} ms`);
assert.ok(grid.total_median_ms < Number(process.env.BUDGET_GRID_MS || 10000), `10k median ${grid.total_median_ms} ms`);

// ----- save (atomic) -------------------------------------------------------------------
await change(page, 'Steps', 9);
await page.getByRole('button', { name: 'Save', exact: true }).click();
await page.waitForFunction(() => window.__studio.stats.saved, null, { timeout: 15000 });
const saved = await page.evaluate(() => window.__studio.stats.saved);
assert.ok(fs.existsSync(saved), `${saved} written`);
log('saved', saved);
fs.writeFileSync(path.join(out, 'saved.txt'), saved);
await browser.close();
