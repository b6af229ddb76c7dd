// Browser benchmarks of the web UI:
//   node bench.mjs SCENARIO URL WORKSPACE
// prints one JSON line of figures. bench/web_bench_test.go runs it
// against the binary and a scripted model.
//   firstload  fresh profile → page loaded, ACP initialized, sessions listed
//   stream     a command printing 100,000 lines: long tasks in the page
//   load500    a session of 500 tool calls: session/load → rendered

import { launch, newSession, open, prompt, screenshot, waitIdle } from "./lib.mjs";

const [scenario, url, workspace] = process.argv.slice(2);
const origin = new URL(url).origin;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function observeLongTasks(page) {
  await page.evaluate(() => {
    window.__long = [];
    window.__since = performance.now();
    new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.startTime >= window.__since) window.__long.push(e.duration); }).observe({ type: "longtask", buffered: true });
  });
}

const scenarios = {
  async firstload(browser) {
    const runs = [];
    for (let i = 0; i < 7; i++) {
      const ctx = await browser.createBrowserContext();
      const page = await ctx.newPage();
      const t0 = Date.now();
      await page.goto(url, { waitUntil: "load" });
      const loaded = Date.now() - t0;
      await page.waitForSelector('body[data-connected="true"]');
      await page.waitForFunction(() => document.querySelectorAll("#session-list li").length >= 0 && document.getElementById("transcript").dataset.state !== "");
      const ready = Date.now() - t0;
      const nav = await page.evaluate(() => {
        const n = performance.getEntriesByType("navigation")[0];
        return { dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd, bytes: performance.getEntriesByType("resource").reduce((s, r) => s + r.transferSize, n.transferSize) };
      });
      runs.push({ loaded, ready, ...nav });
      await ctx.close();
    }
    return {
      runs: runs.length,
      loadMs: median(runs.map((r) => r.loaded)),
      readyMs: median(runs.map((r) => r.ready)),
      domContentLoadedMs: Math.round(median(runs.map((r) => r.dcl))),
      bytes: runs[0].bytes,
    };
  },

  async stream(browser) {
    const page = await open(browser, url);
    await newSession(page, workspace);
    await observeLongTasks(page);
    const cdp = await page.createCDPSession();
    await cdp.send("Network.enable");
    let frames = 0, bytes = 0;
    cdp.on("Network.webSocketFrameReceived", (e) => { frames++; bytes += e.response.payloadData.length; });
    const t0 = Date.now();
    await prompt(page, "Print 100000 lines.");
    await page.waitForSelector('.tool[data-status="in_progress"]');
    await waitIdle(page, 120000);
    const ms = Date.now() - t0;
    // Calibration in the same run: an 80 ms task must be seen as one.
    await page.evaluate(() => { setTimeout(() => { const end = performance.now() + 80; while (performance.now() < end); }, 0); });
    await page.waitForFunction(() => window.__long.some((d) => d >= 80), { timeout: 5000 });
    const all = await page.evaluate(() => window.__long);
    const k = all.findLastIndex((d) => d >= 80);
    const calib = all[k];
    const long = all.slice(0, k);
    const tail = await page.$eval(".tool pre.output", (p) => p.textContent.trim().split("\n").at(-1));
    await screenshot(page, "bench-stream");
    return { frames, megabytes: +(bytes / 1e6).toFixed(1), calibrationMs: Math.round(calib), totalMs: ms, longTasks: long.length, maxLongTaskMs: Math.round(Math.max(0, ...long)), longTaskMs: long.map(Math.round), lastLine: tail };
  },

  async load500(browser) {
    const page = await open(browser, url);
    await newSession(page, workspace);
    await prompt(page, "Make 500 tool calls.");
    await waitIdle(page, 300000);
    const cards = await page.$$eval(".tool", (c) => c.length);
    const hash = new URL(page.url()).hash;
    const runs = [];
    for (let i = 0; i < 5; i++) {
      const p = await browser.newPage();
      await p.setViewport({ width: 1280, height: 900 });
      const cdp = await p.createCDPSession();
      await cdp.send("Performance.enable");
      const t0 = Date.now();
      await p.goto(origin + "/" + hash, { waitUntil: "load" });
      await p.waitForSelector('#transcript[data-state="ready"]', { timeout: 30000 });
      const wall = Date.now() - t0;
      const loadMs = Number(await p.$eval("#transcript", (t) => t.dataset.loadMs));
      const m = Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((x) => [x.name, x.value]));
      const n = await p.$$eval(".tool", (c) => c.length);
      if (n !== cards) throw new Error(`reloaded page shows ${n} cards, not ${cards}`);
      runs.push({ loadMs, wall, task: m.TaskDuration * 1000, script: m.ScriptDuration * 1000, layout: m.LayoutDuration * 1000 });
      if (i === 0) await screenshot(p, "bench-load500");
      await p.close();
    }
    return { cards, loadRenderMs: median(runs.map((r) => r.loadMs)), pageToReadyMs: median(runs.map((r) => r.wall)), mainThreadMs: Math.round(median(runs.map((r) => r.task))), scriptMs: Math.round(median(runs.map((r) => r.script))), layoutMs: Math.round(median(runs.map((r) => r.layout))), runs: runs.length };
  },
};

const browser = await launch();
try {
  const r = await scenarios[scenario](browser);
  console.log("RESULT " + JSON.stringify(r));
} catch (e) {
  console.error(e.stack ?? e);
  process.exitCode = 1;
} finally {
  await browser.close();
}
