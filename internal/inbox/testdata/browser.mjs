// A headless Chromium driven over stdin for toolwarden's browser tests
// (sdk/internal/browser is the Go side): one JSON command per line in, one
// JSON reply per line out, so a Go test can interleave browser steps with
// its own (post an ask, then wait for the page to show it).
//
//   NPM_DIR=<scripts/npm> CHROMIUM=<path> node browser.mjs
//
// Commands: {"op": "goto", "url"} | {"op": "wait", "selector"} (until
// visible) | {"op": "waitGone", "selector"} | {"op": "click", "selector"} |
// {"op": "select", "selector", "value"} |
// {"op": "text", "selector"} | {"op": "count", "selector"} | {"op": "eval",
// "js"} (an expression; its JSON value) | {"op": "screenshot", "path",
// "selector"?} | {"op": "url"} | {"op": "problems"} (console errors, page
// errors and Content-Security-Policy violations so far) | {"op": "close"}.
// Each has an optional "timeout_ms" (default 15000). A reply is {"ok":
// true, "value"} or {"ok": false, "error"}.
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const npm = process.env.NPM_DIR;
if (!npm) {
  console.error('NPM_DIR is not set');
  process.exit(2);
}
const require = createRequire(path.join(npm, 'package.json'));
const puppeteer = require('puppeteer-core');

const browser = await puppeteer.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage', '--window-size=1200,900'],
});
const page = await browser.newPage();
await page.setViewport({ width: 1200, height: 900 });
const problems = [];
page.on('console', (m) => { if (m.type() === 'error') problems.push('console: ' + m.text()); });
page.on('pageerror', (e) => problems.push('page error: ' + e.message));
page.on('requestfailed', (r) => {
  // A live stream cut by navigation or close is not a problem.
  if (!r.url().endsWith('/api/events')) problems.push('request failed: ' + r.url() + ' ' + (r.failure() || {}).errorText);
});
await page.evaluateOnNewDocument(() => {
  document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI));
});

async function run(c) {
  const timeout = c.timeout_ms || 15000;
  switch (c.op) {
    case 'goto': {
      const r = await page.goto(c.url, { waitUntil: 'domcontentloaded', timeout });
      return r ? r.status() : 0;
    }
    case 'wait':
      await page.waitForSelector(c.selector, { visible: true, timeout });
      return true;
    case 'waitGone':
      await page.waitForSelector(c.selector, { hidden: true, timeout });
      return true;
    case 'click':
      await page.waitForSelector(c.selector, { visible: true, timeout });
      await page.click(c.selector);
      return true;
    case 'select':
      await page.waitForSelector(c.selector, { visible: true, timeout });
      return await page.select(c.selector, c.value);
    case 'text':
      await page.waitForSelector(c.selector, { timeout });
      return await page.$eval(c.selector, (e) => e.textContent);
    case 'count':
      return (await page.$$(c.selector)).length;
    case 'eval':
      return await page.evaluate(c.js);
    case 'screenshot':
      if (c.selector) {
        const e = await page.waitForSelector(c.selector, { visible: true, timeout });
        await e.screenshot({ path: c.path });
      } else {
        await page.screenshot({ path: c.path, fullPage: true });
      }
      return c.path;
    case 'url':
      return page.url();
    case 'problems':
      return problems.splice(0);
    case 'close':
      await browser.close();
      return true;
    default:
      throw new Error('unknown op ' + c.op);
  }
}

const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
out({ ok: true, value: 'ready' });
for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  let c;
  try {
    c = JSON.parse(line);
    out({ ok: true, value: await run(c) });
  } catch (e) {
    out({ ok: false, error: String(e && e.message || e) });
  }
  if (c && c.op === 'close') break;
}
await browser.close().catch(() => {});
process.exit(0);
