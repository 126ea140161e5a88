// A Playwright run at work (tests/agent_residue_linux.rs): playwright-core launches Debian's
// Chromium headless and drives it through its pipe (--remote-debugging-pipe, playwright's own
// way), opens a page, prints one JSON line once the page answers, then keeps asking it.
const { chromium } = require('playwright-core');

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox'],
  });
  const page = await browser.newPage();
  await page.setContent('<h1>residue</h1>');
  console.log(JSON.stringify({ ready: await page.textContent('h1') }));
  setInterval(() => page.evaluate(() => 1 + 1).catch(() => {}), 500);
})();
