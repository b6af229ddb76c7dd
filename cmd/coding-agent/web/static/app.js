// The coding-agent web page: an ACP client. It speaks ACP JSON-RPC over a
// WebSocket to the agent that serves editors and renders the session's
// updates. Nothing a model or a tool produced is ever parsed as HTML: it
// goes into text nodes (markdown.js builds elements itself), neutralized.

import { Connection } from "./acp.js";
import { renderMarkdown, stableCut } from "./markdown.js";
import { unifiedDiff } from "./diff.js";
import { el, neutralize, setText, terminalText } from "./text.js";

const $ = (id) => document.getElementById(id);
const LIVE_TAIL_LINES = 400;
const MAX_DIFF_LINES = 2000;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

// ---- frame scheduling: DOM writes that can wait are done once per frame.

const pending = new Map();
let frame = 0;
function later(key, fn) {
  pending.set(key, fn);
  // A hidden tab gets no animation frames: it still renders, at the
  // (throttled) pace of timers, so switching to it shows the present.
  if (!frame) frame = document.hidden ? setTimeout(flush, 100) : requestAnimationFrame(flush);
}
function flush() {
  if (frame) { cancelAnimationFrame(frame); clearTimeout(frame); }
  frame = 0;
  const jobs = [...pending.values()];
  pending.clear();
  for (const fn of jobs) fn();
  const t = $("transcript");
  // While a session loads its history, scrolling (a forced layout of
  // the whole transcript each frame) waits for the end.
  if (stuck && t.dataset.state !== "loading") {
    t.scrollTop = t.scrollHeight;
    autoTop = t.scrollTop;
  }
}
// stuck: the view follows new content until the person scrolls up.
let stuck = true;
let autoTop = 0;

// ---- batch headings

const VERBS = {
  bash: ["ran", "command", "commands"],
  read: ["read", "file", "files"],
  edit: ["edited", "file", "files"],
  write: ["wrote", "file", "files"],
  tool: ["called", "tool", "tools"],
};

function verbOf(name, kind) {
  if (name && VERBS[name] && name !== "tool") return name;
  if (!name) {
    if (kind === "execute") return "bash";
    if (kind === "read") return "read";
    if (kind === "edit") return "edit";
  }
  return "tool";
}

// batchHeading composes "Ran 2 commands, read 1 file" from the verbs of
// the calls, in order of first appearance.
export function batchHeading(verbs) {
  const counts = new Map();
  for (const v of verbs) counts.set(v, (counts.get(v) ?? 0) + 1);
  const parts = [...counts].map(([v, n]) => `${VERBS[v][0]} ${n} ${n === 1 ? VERBS[v][1] : VERBS[v][2]}`);
  const s = parts.join(", ");
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// ---- tool call cards

const STATUS = { pending: "Pending", in_progress: "Running", completed: "Done", failed: "Failed" };

class Card {
  constructor(view, u) {
    this.view = view;
    this.id = u.toolCallId;
    this.verb = verbOf(u.name, u.kind);
    this.status = "pending";
    this.content = [];
    this.title = el("span", { class: "title" });
    this.statusText = el("span", { class: "status-text" });
    this.changes = el("ul", { class: "changes", hidden: true });
    this.body = el("div", { class: "body" });
    this.approval = null;
    this.node = el("article", { class: "tool", "data-tool-call-id": this.id, "data-verb": this.verb },
      el("header", {}, el("span", { class: "dot", "aria-hidden": "true" }), this.title, this.statusText),
      this.body, this.changes);
    this.update(u);
  }

  update(u) {
    if (u.title) {
      setText(this.title, u.title, true);
      this.node.setAttribute("aria-label", neutralize(u.title, true));
    }
    if (u.status) this.setStatus(u.status);
    if (Array.isArray(u.content)) {
      this.content = u.content;
      later(this, () => this.renderContent());
    }
    const changed = u.rawOutput?.details?.changedFiles ?? u.rawOutput?.changedFiles;
    if (Array.isArray(changed) && changed.length) {
      this.changes.replaceChildren(...changed.map((c) => el("li", {}, `${c.kind ?? "changed"} ${c.path}`)));
      this.changes.hidden = false;
    }
  }

  setStatus(s) {
    this.status = s;
    this.node.dataset.status = s;
    setText(this.statusText, STATUS[s] ?? s, true);
    if (s !== "pending") this.view.started(this);
  }

  renderContent() {
    const running = this.status === "in_progress";
    const nodes = [];
    for (const c of this.content) {
      if (c.type === "content" && c.content?.type === "text") {
        // While it runs, only the tail is shown: cut it before any other
        // work, so a flood of output costs the same per frame as a trickle.
        const t = terminalText(running ? tailLines(c.content.text, LIVE_TAIL_LINES) : c.content.text);
        if (t) nodes.push(el("pre", { class: "output" }, t));
      } else if (c.type === "diff") {
        nodes.push(renderDiff(c.path, c.oldText, c.newText));
      } else if (c.type === "terminal") {
        nodes.push(el("p", { class: "note" }, "terminal " + c.terminalId));
      }
    }
    this.body.replaceChildren(...nodes);
    if (running) for (const p of this.body.querySelectorAll("pre.output")) p.scrollTop = p.scrollHeight;
  }

  // ask shows a permission request in the card and resolves with the
  // person's choice; an aborted signal (answered elsewhere, withdrawn)
  // removes it.
  ask(req, signal) {
    const meta = req.toolCall?._meta?.["coding-agent"] ?? {};
    const parts = [];
    for (const c of req.toolCall?.content ?? []) {
      if (c.type === "diff") parts.push(renderDiff(c.path, c.oldText, c.newText));
      else if (c.type === "content" && c.content?.type === "text") {
        const t = c.content.text;
        if (t === meta.justification || t === meta.reason) continue;
        parts.push(el("pre", { class: "command" }, t));
      }
    }
    if (meta.justification) parts.push(el("p", { class: "justification" }, el("strong", {}, "Justification: "), meta.justification));
    if (meta.reason) parts.push(el("p", { class: "reason" }, el("strong", {}, "Policy: "), meta.reason));
    if (!meta.justification && !meta.reason) {
      for (const c of req.toolCall?.content ?? []) {
        if (c.type === "content" && c.content?.type === "text" && (c.content.text === meta.reason)) parts.push(el("p", {}, c.content.text));
      }
    }
    return new Promise((resolve, reject) => {
      const buttons = (req.options ?? []).map((o) =>
        el("button", {
          type: "button", class: "option " + (o.kind ?? ""), "data-option-id": o.optionId,
          onclick: () => done(o),
        }, o.name ?? o.optionId));
      const box = el("div", { class: "approval", role: "group", "aria-label": "Approval" },
        el("p", { class: "ask" }, "Approval needed"), ...parts, el("div", { class: "buttons" }, ...buttons));
      this.approval?.remove();
      this.approval = box;
      this.node.append(box);
      this.node.classList.add("asking");
      const finish = (note) => {
        this.node.classList.remove("asking");
        box.replaceChildren(el("p", { class: "answered" }, note));
        box.removeAttribute("role");
        signal.removeEventListener("abort", onAbort);
      };
      const done = (o) => {
        finish(o.kind?.startsWith("allow") ? `${o.name}: allowed` : `${o.name}: rejected`);
        resolve({ outcome: { outcome: "selected", optionId: o.optionId } });
      };
      const onAbort = () => {
        finish("The question was withdrawn or answered elsewhere.");
        reject(new Error("cancelled"));
      };
      signal.addEventListener("abort", onAbort);
      later("scroll", () => {});
      requestAnimationFrame(() => buttons[0]?.focus({ preventScroll: false }));
    });
  }
}

// tailLines returns the last n lines of s.
function tailLines(s, n) {
  let i = s.length;
  if (s.endsWith("\n")) i--;
  for (let k = 0; k < n; k++) {
    i = s.lastIndexOf("\n", i - 1);
    if (i < 0) return s;
  }
  return s.slice(i + 1);
}

function renderDiff(path, oldText, newText) {
  const lines = unifiedDiff(oldText ?? null, newText ?? "");
  const pre = el("pre", { class: "diff-lines" });
  const shown = lines.slice(0, MAX_DIFF_LINES);
  for (const l of shown) {
    const cls = l.kind === "@" ? "hunk" : l.kind === "+" ? "add" : l.kind === "-" ? "del" : "ctx";
    pre.append(el("span", { class: cls }, (l.kind === "@" ? "" : l.kind) + l.text + "\n"));
  }
  if (lines.length > shown.length) pre.append(el("span", { class: "hunk" }, `… ${lines.length - shown.length} more lines\n`));
  const label = oldText == null ? "new file" : "";
  return el("div", { class: "diff" }, el("div", { class: "diff-path" }, path ?? "", label ? el("span", { class: "tag" }, label) : null), pre);
}

// ---- the transcript of one session

class View {
  constructor(root) {
    this.root = root;
    this.reset();
  }

  reset() {
    this.root.replaceChildren();
    this.last = null; // {type, id, ...} of the last block
    this.cards = new Map();
    this.batch = null;
  }

  append(node) {
    this.root.append(node);
    later("scroll", () => {});
  }

  // block returns the last block when it is of this type and id, else a
  // new one made by make.
  block(type, id, make) {
    if (this.last && this.last.type === type && (id == null || this.last.id === id)) return this.last;
    const b = make();
    b.type = type;
    b.id = id;
    this.last = b;
    this.append(b.node);
    return b;
  }

  update(u) {
    switch (u.sessionUpdate) {
      case "user_message_chunk": {
        const b = this.block("user", u.messageId ?? null, () => ({ node: el("div", { class: "msg user" }) }));
        addContent(b.node, u.content);
        break;
      }
      case "agent_message_chunk": {
        const b = this.block("agent", u.messageId ?? null, () => ({ node: el("div", { class: "msg agent" }), text: "", frozen: 0, live: [] }));
        if (u.content?.type === "text") {
          b.text += u.content.text;
          later(b, () => renderStreaming(b));
        } else addContent(b.node, u.content);
        break;
      }
      case "agent_thought_chunk": {
        const b = this.block("thought", u.messageId ?? null, () => {
          const body = el("div", { class: "thought-text" });
          return { node: el("details", { class: "thought" }, el("summary", {}, "Thinking"), body), body, text: "" };
        });
        if (u.content?.type === "text") {
          b.text += u.content.text;
          later(b, () => setText(b.body, b.text));
        }
        break;
      }
      case "tool_call":
        this.toolCall(u);
        break;
      case "tool_call_update": {
        const c = this.cards.get(u.toolCallId);
        if (c) c.update(u);
        else this.toolCall(u);
        break;
      }
      case "plan": {
        const b = this.block("plan", null, () => ({ node: el("ol", { class: "plan", "aria-label": "Plan" }) }));
        b.node.replaceChildren(...(u.entries ?? []).map((e) => el("li", { "data-status": e.status ?? "" }, e.content ?? "")));
        break;
      }
      default:
        return false;
    }
    return true;
  }

  toolCall(u) {
    if (this.cards.has(u.toolCallId)) {
      this.cards.get(u.toolCallId).update(u);
      return;
    }
    // The tool calls of one assistant message are all announced before
    // the first of them runs: a call announced after one has started
    // belongs to the next message, so to a new batch.
    let b = this.last?.type === "batch" && !this.last.started ? this.last : null;
    if (!b) {
      const heading = el("h3", { class: "batch-heading" });
      const list = el("div", { class: "cards" });
      b = this.block("batch", u.toolCallId, () => ({ node: el("section", { class: "batch" }, heading, list), heading, list, verbs: [], cards: [] }));
    }
    const card = new Card(this, u);
    card.batch = b;
    this.cards.set(card.id, card);
    b.cards.push(card);
    b.verbs.push(card.verb);
    setText(b.heading, batchHeading(b.verbs), true);
    b.list.append(card.node);
    if (card.status !== "pending") b.started = true;
    later("scroll", () => {});
  }

  started(card) {
    if (card.batch) card.batch.started = true;
  }

  note(text, cls = "note") {
    this.last = null;
    this.append(el("p", { class: cls }, text));
  }

  card(id, req) {
    let c = this.cards.get(id);
    if (!c) {
      this.toolCall({ ...req.toolCall, status: req.toolCall?.status ?? "pending" });
      c = this.cards.get(id);
    }
    return c;
  }
}

// renderStreaming renders a streaming message without redoing all of it
// every frame: the text up to the last block boundary that no later text
// can change (a blank line outside a code fence, before a line that does
// not continue a list or an indented block) is rendered once and kept;
// only the rest is rendered again.
function renderStreaming(b) {
  const cut = stableCut(b.text, b.frozen);
  if (cut > b.frozen) {
    for (const n of b.live) n.remove();
    b.live = [];
    b.node.append(renderMarkdown(b.text.slice(b.frozen, cut)));
    b.frozen = cut;
  }
  for (const n of b.live) n.remove();
  const frag = renderMarkdown(b.text.slice(b.frozen));
  b.live = [...frag.childNodes];
  b.node.append(frag);
}

function addContent(node, c) {
  if (!c) return;
  if (c.type === "text") {
    let t = node.lastChild?.nodeType === Node.TEXT_NODE ? node.lastChild : null;
    if (!t) node.append((t = document.createTextNode("")));
    t.data += neutralize(c.text);
  } else if (c.type === "image" && IMAGE_TYPES.has(c.mimeType) && /^[A-Za-z0-9+/=\s]*$/.test(c.data ?? "")) {
    node.append(el("img", { class: "attached", alt: "attached image", src: `data:${c.mimeType};base64,${c.data}` }));
  } else if (c.type === "resource_link") {
    node.append(el("span", { class: "tag" }, "@" + (c.name ?? c.uri)));
  } else {
    node.append(el("span", { class: "tag" }, `[${c.type}]`));
  }
}

// ---- the page

const app = {
  conn: null,
  view: null,
  defaults: {},
  sessionId: "",
  sessions: [],
  commands: [],
  attachments: [],
  prompting: false,
};

function status(text, error = false) {
  const s = $("status");
  setText(s, text, true);
  s.classList.toggle("error", error);
}

function errorText(e) {
  return neutralize(e?.message ?? String(e), true);
}

async function connect() {
  const url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/acp";
  app.conn = new Connection(url, {
    notify: onNotify,
    request: onRequest,
    close: () => {
      status("Disconnected from coding-agent.", true);
      $("status").append(" ", el("button", { type: "button", onclick: () => location.reload() }, "Reconnect"));
      document.body.dataset.connected = "false";
      setPrompting(false);
    },
  });
  await app.conn.opened;
  const init = await app.conn.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
      _meta: { "coding-agent": { extensions: true } },
    },
    clientInfo: { name: "coding-agent-web", title: "coding-agent web", version: app.defaults.version ?? "" },
  });
  document.body.dataset.connected = "true";
  const sb = init?.agentCapabilities?._meta?.["coding-agent"]?.sandbox;
  if (sb && !sb.available) status("Sandbox unavailable: " + (sb.reason ?? ""), true);
  else status("Connected");
}

function onNotify(method, p) {
  if (method === "session/update") {
    if (p.sessionId !== app.sessionId) return;
    const u = p.update ?? {};
    if (u.sessionUpdate === "user_message_chunk" && !app.prompting) refreshListSoon();
    if (app.view.update(u)) return;
    switch (u.sessionUpdate) {
      case "available_commands_update":
        app.commands = u.availableCommands ?? [];
        break;
      case "current_mode_update":
        setSelect("preset", u.currentModeId);
        break;
      case "config_option_update":
        renderConfig(u.configOptions);
        break;
      case "usage_update":
        renderUsage(u);
        break;
      case "session_info_update":
        if (u.title != null) setTitle(u.title);
        break;
    }
  } else if (method === "_coding-agent/files_changed") {
    if (p.sessionId !== app.sessionId) return;
    filesChanged(p.changes ?? []);
  }
}

function filesChanged(changes) {
  const outside = [];
  for (const c of changes) {
    const card = c.origin?.toolCallId && app.view.cards.get(c.origin.toolCallId);
    if (card) {
      if (![...card.changes.children].some((li) => li.dataset.path === c.path)) {
        const li = el("li", { "data-path": c.path }, `${c.kind} ${c.path}`);
        card.changes.append(li);
        card.changes.hidden = false;
      }
    } else outside.push(c);
  }
  if (outside.length) {
    app.view.note("Changed outside the turn: " + outside.map((c) => `${c.path} (${c.kind})`).join(", "), "note files-changed");
  }
}

async function onRequest(method, p, signal) {
  if (method === "session/request_permission") {
    if (p.sessionId !== app.sessionId) {
      // Not the session this tab shows: leave the question to the tab
      // that shows it.
      return new Promise((_, reject) => signal.addEventListener("abort", () => reject(new Error("cancelled"))));
    }
    return app.view.card(p.toolCall?.toolCallId, p).ask(p, signal);
  }
  const e = new Error(`method not found: ${method}`);
  e.code = -32601;
  throw e;
}

// ---- sessions

function relTime(iso) {
  const t = Date.parse(iso);
  if (!t) return "";
  const s = (Date.now() - t) / 1000;
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}

async function listSessions() {
  const r = await app.conn.request("session/list", {});
  app.sessions = r?.sessions ?? [];
  const cur = app.sessions.find((s) => s.sessionId === app.sessionId);
  if (cur?.title) setTitle(cur.title);
  const ul = $("session-list");
  ul.replaceChildren(...app.sessions.map((s) => {
    const b = el("button", { type: "button", class: "session", "data-session-id": s.sessionId, "aria-current": s.sessionId === app.sessionId ? "true" : null, onclick: () => loadSession(s.sessionId) },
      el("span", { class: "s-title" }, s.title || "Untitled session"),
      el("span", { class: "s-cwd" }, s.cwd ?? ""),
      el("time", { datetime: s.updatedAt ?? "" }, relTime(s.updatedAt)));
    return el("li", {}, b);
  }));
}

let listTimer = 0;
function refreshListSoon() {
  clearTimeout(listTimer);
  listTimer = setTimeout(() => listSessions().catch(() => {}), 500);
}

function setTitle(t) {
  setText($("session-title"), t || "Untitled session", true);
  document.title = neutralize(t || "coding-agent", true) + " · coding-agent";
}

function openView(id) {
  app.sessionId = id;
  stuck = true;
  autoTop = 0;
  app.view.reset();
  app.commands = [];
  $("config").replaceChildren();
  $("usage").hidden = true;
  history.replaceState(null, "", "#session=" + encodeURIComponent(id));
  $("composer").hidden = false;
  $("empty").hidden = true;
  for (const b of document.querySelectorAll("#session-list button.session")) {
    if (b.dataset.sessionId === id) b.setAttribute("aria-current", "true");
    else b.removeAttribute("aria-current");
  }
}

async function newSession(ev) {
  ev?.preventDefault();
  const cwd = $("new-cwd").value.trim();
  const params = { cwd, mcpServers: [] };
  if (app.defaults.preset) params._meta = { "coding-agent": { preset: app.defaults.preset } };
  try {
    status("Starting a session…");
    const r = await app.conn.request("session/new", params);
    openView(r.sessionId);
    setTitle("");
    $("transcript").dataset.state = "ready";
    renderConfig(r.configOptions);
    status("Session started in " + neutralize(cwd, true));
    $("message").focus();
    listSessions().catch(() => {});
  } catch (e) {
    status("Could not start a session: " + errorText(e), true);
  }
}

async function loadSession(id) {
  const s = app.sessions.find((x) => x.sessionId === id);
  if (!s) {
    status("Session " + neutralize(id, true) + " is not in the list", true);
    return;
  }
  openView(id);
  setTitle(s.title);
  const t = $("transcript");
  t.dataset.state = "loading";
  const start = performance.now();
  try {
    const r = await app.conn.request("session/load", { sessionId: id, cwd: s.cwd, mcpServers: [], additionalDirectories: s.additionalDirectories ?? [] });
    if (app.sessionId !== id) return;
    renderConfig(r?.configOptions);
    await new Promise((res) => requestAnimationFrame(() => { flush(); res(); }));
    t.dataset.state = "ready";
    flush();
    t.dataset.loadMs = String(Math.round(performance.now() - start));
    status("Loaded");
  } catch (e) {
    t.dataset.state = "error";
    status("Could not load the session: " + errorText(e), true);
  }
}

// ---- config options and usage

function setSelect(id, value) {
  const s = $(id);
  if (s && value != null) s.value = value;
}

// renderConfig shows one picker per select config option (preset, model,
// thinking, whatever the agent offers), in the agent's order.
function renderConfig(options) {
  const box = $("config");
  for (const o of options ?? []) {
    if (o.type && o.type !== "select") continue;
    let sel = [...box.querySelectorAll("select")].find((x) => x.dataset.configId === o.id);
    if (!sel) {
      sel = el("select", { id: /^(preset|model)$/.test(o.id) ? o.id : "config-" + o.id.replace(/[^A-Za-z0-9_-]/g, "_") });
      sel.dataset.configId = o.id;
      sel.addEventListener("change", changeConfig);
      box.append(el("label", {}, el("span", {}, o.name ?? o.id), sel));
    }
    sel.setAttribute("aria-label", neutralize(o.name ?? o.id, true));
    if (o.description) sel.title = neutralize(o.description, true);
    sel.replaceChildren(...(o.options ?? []).map((v) => el("option", { value: v.value, title: v.description ?? null }, v.name ?? v.value)));
    if (o.currentValue && !(o.options ?? []).some((v) => v.value === o.currentValue)) sel.append(el("option", { value: o.currentValue }, o.currentValue));
    sel.value = o.currentValue ?? "";
    sel.disabled = (o.options ?? []).length === 0;
  }
}

async function changeConfig(ev) {
  const sel = ev.target;
  if (!app.sessionId) return;
  try {
    const r = await app.conn.request("session/set_config_option", { sessionId: app.sessionId, configId: sel.dataset.configId, value: sel.value });
    renderConfig(r?.configOptions);
  } catch (e) {
    status("Could not change " + sel.dataset.configId + ": " + errorText(e), true);
  }
}

function fmtTokens(n) {
  if (n >= 1e6) return (n / 1e6).toFixed(1).replace(/\.0$/, "") + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(1).replace(/\.0$/, "") + "k";
  return String(n);
}

function renderUsage(u) {
  const m = $("usage-meter");
  m.max = u.size || 1;
  m.value = Math.min(u.used ?? 0, m.max);
  let t = u.size ? `${fmtTokens(u.used ?? 0)} of ${fmtTokens(u.size)} tokens` : `${fmtTokens(u.used ?? 0)} tokens`;
  if (u.cost && typeof u.cost.amount === "number") {
    t += " · " + (u.cost.currency === "USD" ? "$" + u.cost.amount.toFixed(2) : u.cost.amount.toFixed(2) + " " + neutralize(u.cost.currency, true));
  }
  setText($("usage-text"), t, true);
  $("usage").hidden = false;
}

// ---- the prompt

async function send(ev) {
  ev?.preventDefault();
  const box = $("message");
  const text = box.value;
  if (!app.sessionId || app.prompting || (!text.trim() && !app.attachments.length)) return;
  const prompt = app.attachments.map((a) => ({ type: "image", mimeType: a.mimeType, data: a.data }));
  if (text.trim()) prompt.push({ type: "text", text });
  box.value = "";
  const attached = app.attachments;
  app.attachments = [];
  renderAttachments();
  hideCommands();
  setPrompting(true);
  // The agent does not echo the prompt to the tab that sent it: show it.
  const local = "local-" + Date.now();
  for (const content of prompt) app.view.update({ sessionUpdate: "user_message_chunk", content, messageId: local });
  const bubble = app.view.last?.type === "user" ? app.view.last.node : null;
  try {
    const r = await app.conn.request("session/prompt", { sessionId: app.sessionId, prompt });
    if (r?.stopReason && r.stopReason !== "end_turn") app.view.note(stopText(r.stopReason), "note stop");
  } catch (e) {
    if (bubble && app.view.last?.node === bubble) {
      // Nothing of the turn happened: the prompt goes back into the box.
      bubble.remove();
      app.view.last = null;
    }
    app.view.note("Error: " + errorText(e), "note error");
    // Nothing the person typed is lost: a prompt that failed goes back
    // into the box (unless they started typing another).
    if (!box.value) box.value = text;
    if (!app.attachments.length) {
      app.attachments = attached;
      renderAttachments();
    }
  } finally {
    setPrompting(false);
    listSessions().catch(() => {});
  }
}

function stopText(r) {
  return { cancelled: "Cancelled.", max_tokens: "Stopped: the model reached its output limit.", max_turn_requests: "Stopped: too many model requests in one turn.", refusal: "The model refused." }[r] ?? "Stopped: " + r;
}

function setPrompting(on) {
  app.prompting = on;
  $("send").disabled = on;
  document.body.dataset.prompting = on ? "true" : "false";
}

function cancel() {
  if (!app.sessionId) return;
  app.conn.notify("session/cancel", { sessionId: app.sessionId });
  status("Cancelling…");
}

// ---- images

function addFiles(files) {
  for (const f of files) {
    if (!IMAGE_TYPES.has(f.type)) {
      status(`Not attached: ${neutralize(f.name, true)} is not a PNG, JPEG, GIF or WebP image`, true);
      continue;
    }
    const r = new FileReader();
    r.onload = () => {
      const url = String(r.result);
      app.attachments.push({ mimeType: f.type, data: url.slice(url.indexOf(",") + 1), name: f.name, url });
      renderAttachments();
    };
    r.readAsDataURL(f);
  }
}

function renderAttachments() {
  const box = $("attachments");
  box.replaceChildren(...app.attachments.map((a, i) =>
    el("figure", {}, el("img", { src: a.url, alt: a.name || "image" }),
      el("button", { type: "button", "aria-label": "Remove image " + neutralize(a.name || String(i + 1), true), onclick: () => { app.attachments.splice(i, 1); renderAttachments(); } }, "×"))));
  box.hidden = app.attachments.length === 0;
}

// ---- slash commands

function showCommands() {
  const box = $("message");
  const m = /^\/(\S*)$/.exec(box.value);
  const list = $("commands");
  if (!m || !app.commands.length) return hideCommands();
  const matches = app.commands.filter((c) => c.name.startsWith(m[1]));
  if (!matches.length) return hideCommands();
  list.replaceChildren(...matches.map((c, i) => el("li", { role: "option", id: "cmd-" + i, "aria-selected": i === 0 ? "true" : "false", "data-name": c.name, onmousedown: (e) => { e.preventDefault(); pickCommand(c.name); } },
    el("span", { class: "c-name" }, "/" + c.name), el("span", { class: "c-desc" }, c.description ?? ""))));
  list.hidden = false;
  box.setAttribute("aria-expanded", "true");
}

function hideCommands() {
  $("commands").hidden = true;
  $("message").setAttribute("aria-expanded", "false");
}

function pickCommand(name) {
  const box = $("message");
  box.value = "/" + name + " ";
  hideCommands();
  box.focus();
}

function moveCommand(d) {
  const items = [...$("commands").children];
  const i = items.findIndex((li) => li.getAttribute("aria-selected") === "true");
  const j = (i + d + items.length) % items.length;
  items.forEach((li, k) => li.setAttribute("aria-selected", k === j ? "true" : "false"));
}

// ---- wiring

async function main() {
  app.view = new View($("transcript"));
  $("transcript").addEventListener("scroll", () => {
    const t = $("transcript");
    // Our own scrolling (autoTop) never unsticks, however much content
    // arrived since; scrolling up does; back at the bottom sticks again.
    stuck = t.scrollTop >= autoTop - 1 || t.scrollTop + t.clientHeight >= t.scrollHeight - 48;
  }, { passive: true });
  $("new-session").addEventListener("submit", newSession);
  $("composer").addEventListener("submit", send);
  $("cancel").addEventListener("click", cancel);
  const box = $("message");
  box.addEventListener("keydown", (e) => {
    const open = !$("commands").hidden;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) { e.preventDefault(); moveCommand(e.key === "ArrowDown" ? 1 : -1); return; }
    if (open && (e.key === "Tab" || e.key === "Enter")) {
      const sel = $("commands").querySelector('[aria-selected="true"]');
      if (sel) { e.preventDefault(); pickCommand(sel.dataset.name); return; }
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
  });
  box.addEventListener("input", showCommands);
  box.addEventListener("blur", () => setTimeout(hideCommands, 0));
  box.addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files ?? [])];
    if (files.length) { e.preventDefault(); addFiles(files); }
  });
  const composer = $("composer");
  composer.addEventListener("dragover", (e) => { e.preventDefault(); composer.classList.add("drop"); });
  composer.addEventListener("dragleave", () => composer.classList.remove("drop"));
  composer.addEventListener("drop", (e) => {
    e.preventDefault();
    composer.classList.remove("drop");
    addFiles([...(e.dataTransfer?.files ?? [])]);
  });
  $("attach").addEventListener("change", (e) => { addFiles([...e.target.files]); e.target.value = ""; });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !e.defaultPrevented && app.sessionId) {
      if (!$("commands").hidden) { hideCommands(); return; }
      cancel();
    }
  });

  try {
    app.defaults = await (await fetch("/defaults.json")).json();
  } catch {
    app.defaults = {};
  }
  $("new-cwd").value = app.defaults.cwd ?? "";
  try {
    await connect();
    await listSessions();
  } catch (e) {
    status("Could not connect: " + errorText(e), true);
    return;
  }
  const m = /^#session=(.+)$/.exec(location.hash);
  if (m) await loadSession(decodeURIComponent(m[1]));
  else $("transcript").dataset.state = "empty";
}

main();
