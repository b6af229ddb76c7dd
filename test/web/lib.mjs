// Helpers for driving `coding-agent web` in Debian's chromium with
// puppeteer-core. The Go tests start the binary (against a scripted model
// server) and pass its URL; these scripts act as the person at the page.

import puppeteer from "puppeteer-core";
import fs from "node:fs";
import path from "node:path";

export const CHROMIUM = process.env.CHROMIUM || ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) => fs.existsSync(p));

export async function launch() {
  if (!CHROMIUM) throw new Error("chromium not found (apt-get install chromium, or set CHROMIUM)");
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check"],
  });
}

// open opens url in a new page and fails the run on any page error, CSP
// violation or dialog (an alert would mean script ran that should not).
export async function open(browser, url, problems = []) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("dialog", async (d) => { problems.push("dialog: " + d.message()); await d.dismiss(); });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push("console error: " + m.text());
  });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector('body[data-connected="true"]', { timeout: 15000 });
  return page;
}

export async function screenshot(page, name) {
  const dir = process.env.SCREENSHOTS || path.join(import.meta.dirname, "screenshots");
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name + ".png");
  await page.screenshot({ path: file, fullPage: false });
  console.log("screenshot", file);
}

export async function newSession(page, cwd) {
  await page.$eval("#new-cwd", (e, v) => { e.value = v; }, cwd);
  await page.click("#new-session button[type=submit]");
  await page.waitForSelector("#composer:not([hidden])");
  await page.waitForSelector('#transcript[data-state="ready"]');
}

export async function prompt(page, text) {
  await page.click("textarea[aria-label=Message]");
  await page.keyboard.type(text);
  await page.click("button ::-p-text(Send)");
}

export async function waitIdle(page, timeout = 30000) {
  await page.waitForSelector('body[data-prompting="false"]', { timeout });
}

export function assert(cond, msg) {
  if (!cond) throw new Error("assertion failed: " + msg);
}

export async function run(main) {
  const problems = [];
  let browser;
  try {
    browser = await launch();
    await main(browser, problems);
    if (problems.length) throw new Error("problems in the page:\n" + problems.join("\n"));
    console.log("ok");
  } catch (e) {
    console.error(e.stack ?? e);
    process.exitCode = 1;
    // What the person would have seen, for the log.
    for (const [i, p] of (await browser?.pages().catch(() => []) ?? []).entries()) {
      const t = await p.$eval("#transcript", (t) => t.innerText).catch(() => "");
      const st = await p.$eval("#status", (t) => t.innerText).catch(() => "");
      if (t || st) console.error(`page ${i}: status ${JSON.stringify(st)}\n${t.slice(-3000)}`);
      await screenshot(p, "failure-" + i).catch(() => {});
    }
  } finally {
    await browser?.close();
  }
}
