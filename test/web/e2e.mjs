// End-to-end scenarios of the web UI in a real browser:
//   node e2e.mjs SCENARIO URL WORKSPACE
// The Go test (cmd/coding-agent/web_test.go) starts `coding-agent web`
// against a scripted model whose script matches SCENARIO, then runs this.

import fs from "node:fs";
import path from "node:path";
import { assert, newSession, open, prompt, run, screenshot, waitIdle } from "./lib.mjs";

const [scenario, url, workspace] = process.argv.slice(2);
const origin = new URL(url).origin;

async function recordTitles(page) {
  await page.evaluate(() => {
    window.__titles = [];
    const seen = (t) => { if (window.__titles.at(-1) !== t) window.__titles.push(t); };
    new MutationObserver((recs) => {
      for (const r of recs) {
        const target = r.target.nodeType === 1 ? r.target : r.target.parentElement;
        if (target?.classList?.contains("title")) {
          for (const n of r.addedNodes) seen(n.textContent);
          if (r.type === "characterData") seen(r.target.data);
        }
        for (const n of r.addedNodes) if (n.nodeType === 1) n.querySelectorAll(".title").forEach((x) => seen(x.textContent));
      }
    }).observe(document.getElementById("transcript"), { subtree: true, childList: true, characterData: true });
  });
}

const text = (page, sel) => page.$eval(sel, (e) => e.textContent);

const scenarios = {
  // A full turn: titles change while the arguments stream, the batch
  // heading sits below the phase text, Markdown renders, HTML from the
  // model stays text; then a reload replays it all.
  async turn(browser, problems) {
    // Without the token (a fresh profile has no cookie) the page is 401.
    const anon = await browser.createBrowserContext();
    const ap = await anon.newPage();
    const r = await ap.goto(origin + "/");
    assert(r.status() === 401, "page without token: status " + r.status());
    await anon.close();

    const page = await open(browser, url, problems);
    assert(!page.url().includes("token="), "the token left the address bar: " + page.url());
    await newSession(page, workspace);
    await recordTitles(page);
    await prompt(page, "Run two commands please.");
    await waitIdle(page);
    await page.waitForSelector(".msg.agent strong");
    const titles = await page.evaluate(() => window.__titles);
    console.log("titles seen:", JSON.stringify(titles));
    const first = titles.slice(0, titles.indexOf("Bash · echo hello && echo world") + 1);
    assert(first.length >= 3, "the first card's title changed fewer than 3 times: " + JSON.stringify(first));
    assert(first.at(-1) === "Bash · echo hello && echo world", "final title: " + first.at(-1));
    for (let i = 1; i < first.length; i++) assert(first[i].length > first[i - 1].length, "titles grow: " + JSON.stringify(first));
    await checkTurn(page, "live");
    const usage = await text(page, "#usage-text");
    assert(/^1\.\dk of 200k tokens$/.test(usage), "usage meter: " + usage);
    const thought = await page.$eval("details.thought", (d) => ({ open: d.open, text: d.textContent }));
    assert(!thought.open && thought.text.includes("Both printed; summarize."), "collapsed thought: " + JSON.stringify(thought));
    await page.click("details.thought summary");
    assert(await page.$eval("details.thought", (d) => d.open), "the thought opens");
    await screenshot(page, "turn");

    await page.reload({ waitUntil: "load" });
    await page.waitForSelector('#transcript[data-state="ready"]', { timeout: 15000 });
    await checkTurn(page, "replayed");
    await screenshot(page, "turn-reloaded");
  },

  // Allow once writes the file; Reject (chosen from the keyboard) does not.
  async approve(browser, problems) {
    const page = await open(browser, url, problems);
    await newSession(page, workspace);
    await prompt(page, "Write allowed.txt");
    const allow = await page.waitForSelector(".approval button ::-p-text(Allow once)");
    const box = ".tool.asking .approval";
    const diff = await text(page, box + " .diff");
    assert(diff.includes("+yes"), "the approval shows the diff: " + diff);
    const just = await text(page, box + " .justification");
    assert(just.includes("Sie haben darum gebeten <b>bitte</b>"), "justification as plain text: " + just);
    assert((await page.$$(box + " b")).length === 0, "markup in the justification became an element");
    const reason = await text(page, box + " .reason");
    assert(reason.length > "Policy: ".length, "policy reason shown: " + reason);
    const names = await page.$$eval(box + " .buttons button", (bs) => bs.map((b) => b.textContent));
    assert(names[0] === "Allow once" && names.at(-1) === "Reject", "buttons named by the options: " + names);
    await screenshot(page, "approval");
    await allow.click();
    await waitIdle(page);
    assert(fs.readFileSync(path.join(workspace, "allowed.txt"), "utf8") === "yes\n", "allowed.txt written");

    await prompt(page, "Write rejected.txt");
    await page.waitForSelector(".approval button ::-p-text(Reject)");
    await page.waitForFunction(() => document.activeElement?.textContent === "Allow once");
    for (let i = 0; i < 4 && (await page.evaluate(() => document.activeElement?.textContent)) !== "Reject"; i++) await page.keyboard.press("Tab");
    const focused = await page.evaluate(() => document.activeElement?.textContent);
    assert(focused === "Reject", "Tab moves to Reject, got " + focused);
    await page.keyboard.press("Enter");
    await waitIdle(page);
    assert(!fs.existsSync(path.join(workspace, "rejected.txt")), "rejected.txt must not exist");
    const st = await page.$eval('.tool[data-tool-call-id="w2"]', (e) => e.dataset.status);
    assert(st === "failed", "rejected call status " + st);
  },

  // Esc cancels a running command: its process is gone.
  async cancel(browser, problems) {
    const nonce = process.env.SLEEP_ARG;
    const page = await open(browser, url, problems);
    await newSession(page, workspace);
    await prompt(page, "Sleep.");
    await page.waitForSelector('.tool[data-status="in_progress"]');
    const pid = await waitFor(() => findProcess(["sleep", nonce]), "the sleep process to start");
    console.log("sleep pid", pid);
    await page.click("#cancel");
    await page.waitForSelector(".note.stop ::-p-text(Cancelled.)", { timeout: 15000 });
    await waitFor(() => !fs.existsSync("/proc/" + pid) || isZombie(pid), "the sleep process to be gone");
    const st = await page.$eval('.tool[data-tool-call-id="s1"]', (e) => e.dataset.status);
    assert(st === "failed", "cancelled call status " + st);
    await screenshot(page, "cancelled");
  },

  // An image attached to the prompt is shown in the message and sent (the
  // Go test checks the model's request).
  async image(browser, problems) {
    const page = await open(browser, url, problems);
    await newSession(page, workspace);
    // Slash commands from available_commands_update: "/" lists them,
    // Enter picks the selected one.
    await page.click("textarea[aria-label=Message]");
    await page.keyboard.type("/");
    await page.waitForSelector("#commands:not([hidden]) li");
    const cmds = await page.$$eval("#commands li .c-name", (ls) => ls.map((l) => l.textContent));
    assert(cmds.includes("/help"), "slash commands offered: " + cmds);
    await page.keyboard.type("hel");
    await page.keyboard.press("Enter");
    const picked = await page.$eval("#message", (m) => m.value);
    assert(picked === "/help ", "picked command: " + JSON.stringify(picked));
    await page.$eval("#message", (m) => { m.value = ""; });
    const png = path.join(workspace, "..", "pixel.png");
    fs.writeFileSync(png, Buffer.from(process.env.PIXEL_PNG, "base64"));
    const input = await page.$("#attach");
    await input.uploadFile(png);
    await page.waitForSelector("#attachments img");
    await prompt(page, "What is this?");
    await waitIdle(page);
    await page.waitForSelector(".msg.user img.attached");
    await page.waitForSelector(".msg.agent ::-p-text(A single pixel.)");
    assert((await page.$$("#attachments img")).length === 0, "attachments cleared after sending");
    // The preset picker changes the session's preset.
    await page.select("#preset", "workspace-write");
    await page.waitForFunction(() => document.getElementById("preset").value === "workspace-write");
    const options = await page.$$eval("#preset option", (os) => os.map((o) => o.value));
    assert(options.join() === "read-only,workspace-write,full-access", "preset options " + options);
    const pickers = await page.$$eval("#config select", (ss) => ss.map((s) => s.getAttribute("aria-label")));
    assert(pickers.includes("Permissions") && pickers.includes("Model"), "config pickers: " + pickers);
    await screenshot(page, "image");
  },

  // The Markdown renderer, fuzzed in the page: random strings of the
  // characters Markdown cares about never throw, never hang, and make only
  // the elements it knows (so nothing from the text became markup), with
  // the text preserved.
  async markdown(browser, problems) {
    const page = await open(browser, url, problems);
    const r = await page.evaluate(async () => {
      const { renderMarkdown, stableCut } = await import("/static/markdown.js");
      const html = (f) => { const d = document.createElement("div"); d.append(f); return d.innerHTML; };
      const allowed = new Set(["P", "H3", "H4", "H5", "H6", "PRE", "CODE", "UL", "OL", "LI", "BLOCKQUOTE", "HR", "TABLE", "THEAD", "TBODY", "TR", "TH", "TD", "DIV", "STRONG", "EM", "DEL", "A", "BR"]);
      const alphabet = ["\n\nword", "\n\n```\n", "\n\n- x", "\n\n    y", "\n\n# h", "*", "_", "~", "`", "```", "#", "-", "+", "1.", ">", "|", "[", "]", "(", ")", "!", "\\", "<", ">", "&", "\n", "\n\n", " ", "  ", "a", "b", "http://x", "<script>", "<img src=x onerror=alert(1)>", "\u202e", "\u001b"];
      let seed = 12345;
      const rnd = (n) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
      let worst = 0, bad = [], splits = 0;
      for (let i = 0; i < 3000; i++) {
        let s = "";
        const len = 1 + rnd(60);
        for (let k = 0; k < len; k++) s += alphabet[rnd(alphabet.length)];
        const t0 = performance.now();
        let frag;
        try { frag = renderMarkdown(s); } catch (e) { bad.push("throws: " + JSON.stringify(s) + " " + e); continue; }
        worst = Math.max(worst, performance.now() - t0);
        const div = document.createElement("div");
        div.append(frag);
        // Streaming renders the stable prefix once: it must not change
        // the result.
        const cut = stableCut(s, 0);
        if (cut > 0) {
          splits++;
          const whole = div.innerHTML, parts = html(renderMarkdown(s.slice(0, cut))) + html(renderMarkdown(s.slice(cut)));
          if (whole !== parts) bad.push("split at " + cut + " changes " + JSON.stringify(s));
        }
        for (const e of div.querySelectorAll("*")) if (!allowed.has(e.tagName)) bad.push("element " + e.tagName + " from " + JSON.stringify(s));
        for (const a of div.querySelectorAll("a")) if (!/^(https?:|mailto:)/.test(a.getAttribute("href"))) bad.push("href " + a.getAttribute("href"));
        if (/[\u0000-\u0008\u000b-\u001f\u202e]/.test(div.textContent)) bad.push("control character kept from " + JSON.stringify(s));
      }
      // A long message stays fast.
      const long = ("## Head\n\nSome *text* with `code` and [a link](https://example.com).\n\n- item\n- item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```go\nfunc main() {}\n```\n\n").repeat(400);
      const t0 = performance.now();
      renderMarkdown(long);
      return { worst, splits, bad: bad.slice(0, 10), longMs: performance.now() - t0, longChars: long.length };
    });
    console.log("markdown fuzz:", JSON.stringify(r));
    assert(r.bad.length === 0, "markdown: " + r.bad.join("\n"));
    assert(r.splits > 300, "the fuzz split few messages: " + r.splits);
  },

  // Two tabs on one session see the same stream.
  async tabs(browser, problems) {
    const a = await open(browser, url, problems);
    await newSession(a, workspace);
    const hash = new URL(a.url()).hash;
    assert(hash.startsWith("#session="), "session in the address: " + a.url());
    const b = await open(browser, origin + "/" + hash, problems);
    await b.waitForSelector('#transcript[data-state="ready"]');
    await a.bringToFront(); // a hidden tab gets no animation frames, which clicks wait for
    await prompt(a, "Talk to both tabs.");
    for (const p of [a, b]) {
      await p.bringToFront();
      await p.waitForSelector('.tool[data-status="completed"] ::-p-text(Bash · echo two-tabs)');
      await p.waitForSelector(".msg.agent ::-p-text(Both tabs see this.)");
      await p.waitForSelector(".msg.user ::-p-text(Talk to both tabs.)");
    }
    const out = await b.$eval(".tool pre.output", (e) => e.textContent);
    assert(out.includes("two-tabs"), "second tab shows the output: " + out);
    // A change outside the turn is shown in both tabs.
    fs.writeFileSync(path.join(workspace, "outside.txt"), "made by someone else\n");
    for (const p of [a, b]) {
      await p.bringToFront();
      await p.waitForSelector(".files-changed ::-p-text(outside.txt)");
    }
    await screenshot(b, "second-tab");
  },
};

async function checkTurn(page, when) {
  const msgs = await page.$$eval(".msg.agent", (ms) => ms.map((m) => m.textContent));
  assert(msgs[0]?.includes("I'll run two commands."), when + ": phase text: " + msgs[0]);
  const heading = await text(page, ".batch-heading");
  assert(heading === "Ran 2 commands", when + ": batch heading: " + heading);
  const below = await page.evaluate(() => {
    const phase = document.querySelector(".msg.agent").getBoundingClientRect();
    const h = document.querySelector(".batch-heading").getBoundingClientRect();
    return h.top >= phase.bottom && h.height > 0;
  });
  assert(below, when + ": the heading is below the phase text");
  const last = msgs.at(-1);
  assert(last.includes("<img src=x onerror=alert(1)>"), when + ": model HTML shown as text: " + last);
  assert((await page.$$("#transcript img")).length === 0, when + ": model HTML became an img");
  assert(last.includes("ok\u241b[31mred\u240dfake\u27e8U+202E\u27e9evil\u27e8U+2028\u27e9end"), when + ": control characters neutralized: " + JSON.stringify(last.slice(-60)));
  for (const sel of [".msg.agent strong", ".msg.agent li", ".msg.agent table td", ".msg.agent pre code"]) {
    assert((await page.$$(sel)).length > 0, when + ": markdown " + sel);
  }
  const outs = await page.$$eval(".tool pre.output", (ps) => ps.map((p) => p.textContent));
  assert(outs.some((o) => o.includes("hello") && o.includes("world")), when + ": command output: " + JSON.stringify(outs));
  const titles = await page.$$eval(".tool .title", (ts) => ts.map((t) => t.textContent));
  assert(titles.includes("Bash · echo hello && echo world") && titles.includes("Bash · ls"), when + ": titles " + titles);
}

function findProcess(argv) {
  for (const d of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (cmd.length === argv.length && cmd.every((a, i) => path.basename(a) === argv[i] || a === argv[i])) return Number(d);
    } catch {}
  }
  return 0;
}

function isZombie(pid) {
  try {
    return / Z /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\)/, ""));
  } catch {
    return true;
  }
}

// waitFor polls a condition on the host (the /proc table has no event to
// wait on) until it holds or 15 s pass.
async function waitFor(fn, what) {
  const end = Date.now() + 15000;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await new Promise((r) => setTimeout(r, 25));
  }
}

if (!scenarios[scenario]) {
  console.error("unknown scenario " + scenario);
  process.exit(2);
}
run((browser, problems) => scenarios[scenario](browser, problems));
