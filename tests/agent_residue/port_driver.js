// Puppeteer's way, with playwright-core (tests/agent_residue_linux.rs): Debian's Chromium
// started headless and detached on a debugging port the browser picks (port 0), its endpoint
// read from its stderr, then driven over CDP (`connectOverCDP`: a TCP client in the driver).
// Prints one JSON line {"browser": PID, "endpoint"} once a page answers, then keeps asking it.
const { spawn } = require('child_process');
const { chromium } = require('playwright-core');

const browser = spawn('/usr/bin/chromium', ['--headless', '--no-sandbox',
  '--remote-debugging-port=0', `--user-data-dir=${process.cwd()}/profile`, 'about:blank'],
{ stdio: ['ignore', 'ignore', 'pipe'], detached: true });
let said = '';
let connected = false;
browser.stderr.on('data', async (chunk) => {
  said += chunk;
  const endpoint = (said.match(/DevTools listening on (ws:\/\/\S+)/) || [])[1];
  if (!endpoint || connected) return;
  connected = true;
  const cdp = await chromium.connectOverCDP(endpoint);
  const context = cdp.contexts()[0];
  const page = context.pages()[0] || await context.newPage();
  await page.setContent('<h1>residue</h1>');
  console.log(JSON.stringify({ browser: browser.pid, endpoint }));
  setInterval(() => page.evaluate(() => 1 + 1).catch(() => {}), 500);
});
