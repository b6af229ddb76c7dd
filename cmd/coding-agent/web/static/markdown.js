// A small Markdown renderer that builds DOM nodes and never parses HTML:
// raw HTML in a model's text stays text. It covers what models write —
// headings, paragraphs, fenced code, lists (nested), block quotes, tables,
// rules, and inline code, emphasis, strike-through and links (http, https
// and mailto only; images become links, so no remote asset is loaded). An
// unclosed code fence (a message still streaming) renders as code.

import { neutralize } from "./text.js";

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const ITEM = /^( {0,12})([-*+]|\d{1,9}[.)])(\s+|$)(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function text(s) { return document.createTextNode(neutralize(s)); }

// renderMarkdown returns a DocumentFragment for src.
export function renderMarkdown(src) {
  const frag = document.createDocumentFragment();
  blocks(String(src ?? "").replace(/\r\n/g, "\n").split("\n"), frag);
  return frag;
}

function startsBlock(line, next) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) ||
    ITEM.test(line) || (line.includes("|") && next !== undefined && TABLE_SEP.test(next) && next.includes("-"));
}

function blocks(lines, parent) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (/^\s*$/.test(line)) { i++; continue; }
    let m;
    if ((m = FENCE.exec(line))) {
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp("^ {0,3}" + fence[0] + "{" + fence.length + ",}\\s*$").test(lines[i])) body.push(lines[i++]);
      i++;
      const code = document.createElement("code");
      if (m[2]) code.dataset.lang = neutralize(m[2], true);
      code.append(text(body.join("\n")));
      const pre = document.createElement("pre");
      pre.append(code);
      parent.append(pre);
      continue;
    }
    if ((m = HEADING.exec(line))) {
      const h = document.createElement("h" + Math.min(m[1].length + 2, 6));
      inline(m[2] ?? "", h);
      parent.append(h);
      i++;
      continue;
    }
    if (RULE.test(line)) { parent.append(document.createElement("hr")); i++; continue; }
    if (QUOTE.test(line)) {
      const inner = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) { inner.push(m[1]); i++; }
      const q = document.createElement("blockquote");
      blocks(inner, q);
      parent.append(q);
      continue;
    }
    if ((m = ITEM.exec(line))) { i = list(lines, i, parent); continue; }
    if (line.includes("|") && i + 1 < lines.length && TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      i = table(lines, i, parent);
      continue;
    }
    const para = [line];
    i++;
    while (i < lines.length && !/^\s*$/.test(lines[i]) && !startsBlock(lines[i], lines[i + 1])) para.push(lines[i++]);
    const p = document.createElement("p");
    inline(para.join("\n"), p);
    parent.append(p);
  }
}

function list(lines, i, parent) {
  const first = ITEM.exec(lines[i]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const l = document.createElement(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1) l.start = parseInt(first[2], 10);
  let loose = false;
  while (i < lines.length) {
    const m = ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const width = m[1].length + m[2].length + Math.max(1, m[3].length);
    const body = [m[4]];
    i++;
    while (i < lines.length) {
      const ln = lines[i];
      if (/^\s*$/.test(ln)) {
        // A blank line continues the item only if indented text follows.
        let j = i + 1;
        while (j < lines.length && /^\s*$/.test(lines[j])) j++;
        if (j < lines.length && lines[j].search(/\S/) >= width) { loose = true; body.push(""); i++; continue; }
        break;
      }
      const im = ITEM.exec(ln);
      if (im && im[1].length <= indent) break;
      if (ln.search(/\S/) >= Math.min(width, indent + 2)) { body.push(ln.slice(Math.min(width, ln.search(/\S/)))); i++; continue; }
      if (startsBlock(ln, lines[i + 1])) break;
      body.push(ln.trim()); // lazy continuation
      i++;
    }
    const li = document.createElement("li");
    if (!loose && !body.slice(1).some((b) => ITEM.test(b) || FENCE.test(b) || /^\s*$/.test(b))) inline(body.join("\n"), li);
    else if (!loose) {
      // A tight item with a nested block: its first paragraph inline.
      let k = 1;
      while (k < body.length && !ITEM.test(body[k]) && !FENCE.test(body[k]) && !/^\s*$/.test(body[k])) k++;
      inline(body.slice(0, k).join("\n"), li);
      blocks(body.slice(k), li);
    } else blocks(body, li);
    l.append(li);
    while (i < lines.length && /^\s*$/.test(lines[i])) {
      const n = ITEM.exec(lines[i + 1] ?? "");
      if (n && n[1].length === indent) { loose = true; i++; } else break;
    }
  }
  parent.append(l);
  return i;
}

function cells(line) {
  let s = line.trim();
  if (s.startsWith("|")) s = s.slice(1);
  if (s.endsWith("|") && !s.endsWith("\\|")) s = s.slice(0, -1);
  const out = [];
  let cur = "";
  for (let k = 0; k < s.length; k++) {
    if (s[k] === "\\" && s[k + 1] === "|") { cur += "|"; k++; }
    else if (s[k] === "|") { out.push(cur.trim()); cur = ""; }
    else cur += s[k];
  }
  out.push(cur.trim());
  return out;
}

function table(lines, i, parent) {
  const head = cells(lines[i]);
  const aligns = cells(lines[i + 1]).map((c) => (c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : ""));
  i += 2;
  const t = document.createElement("table");
  const thead = t.createTHead().insertRow();
  head.forEach((c, k) => {
    const th = document.createElement("th");
    if (aligns[k]) th.style.textAlign = aligns[k];
    inline(c, th);
    thead.append(th);
  });
  const tb = t.createTBody();
  while (i < lines.length && lines[i].includes("|") && !/^\s*$/.test(lines[i])) {
    const row = tb.insertRow();
    const cs = cells(lines[i]);
    for (let k = 0; k < head.length; k++) {
      const td = row.insertCell();
      if (aligns[k]) td.style.textAlign = aligns[k];
      inline(cs[k] ?? "", td);
    }
    i++;
  }
  const wrap = document.createElement("div");
  wrap.className = "table";
  wrap.append(t);
  parent.append(wrap);
  return i;
}

const SAFE_URL = /^(https?:\/\/|mailto:)/i;

// inline renders inline Markdown of s into parent.
export function inline(s, parent) {
  let buf = "";
  const flush = () => { if (buf) { parent.append(text(buf)); buf = ""; } };
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\" && i + 1 < s.length && /[!-\/:-@\[-`{-~]/.test(s[i + 1])) { buf += s[i + 1]; i += 2; continue; }
    if (c === "\\" && s[i + 1] === "\n") { flush(); parent.append(document.createElement("br")); i += 2; continue; }
    if (c === "\n") {
      if (buf.endsWith("  ")) { buf = buf.replace(/ +$/, ""); flush(); parent.append(document.createElement("br")); }
      else buf += "\n";
      i++;
      continue;
    }
    if (c === "`") {
      let n = 0;
      while (s[i + n] === "`") n++;
      const ticks = "`".repeat(n);
      let j = s.indexOf(ticks, i + n);
      while (j >= 0 && s[j + n] === "`") j = s.indexOf(ticks, j + n + 1);
      if (j > 0) {
        flush();
        const code = document.createElement("code");
        let body = s.slice(i + n, j).replace(/\n/g, " ");
        if (/^ .*\S.* $/.test(body)) body = body.slice(1, -1);
        code.append(text(body));
        parent.append(code);
        i = j + n;
        continue;
      }
      buf += ticks;
      i += n;
      continue;
    }
    if ((c === "*" || c === "_" || c === "~") && (c !== "_" || !/\w/.test(s[i - 1] ?? ""))) {
      const two = s[i + 1] === c;
      if (c === "~" && !two) { buf += c; i++; continue; }
      const delim = two ? c + c : c;
      const after = s[i + delim.length];
      if (after && !/\s/.test(after)) {
        let j = i + delim.length;
        for (;;) {
          j = s.indexOf(delim, j + 1);
          if (j < 0) break;
          if (!/\s/.test(s[j - 1]) && (delim.length === 2 || s[j + 1] !== c) && (c !== "_" || !/\w/.test(s[j + delim.length] ?? ""))) break;
        }
        if (j > 0) {
          flush();
          const e = document.createElement(c === "~" ? "del" : two ? "strong" : "em");
          inline(s.slice(i + delim.length, j), e);
          parent.append(e);
          i = j + delim.length;
          continue;
        }
      }
      buf += delim;
      i += delim.length;
      continue;
    }
    if (c === "[" || (c === "!" && s[i + 1] === "[")) {
      const img = c === "!";
      const open = img ? i + 1 : i;
      const close = matchBracket(s, open);
      if (close > 0 && s[close + 1] === "(") {
        const end = s.indexOf(")", close + 2);
        if (end > 0) {
          const label = s.slice(open + 1, close);
          const url = s.slice(close + 2, end).trim().split(/\s+/)[0].replace(/^<|>$/g, "");
          flush();
          if (SAFE_URL.test(url)) {
            const a = document.createElement("a");
            a.href = url;
            a.rel = "noopener noreferrer";
            a.target = "_blank";
            a.title = neutralize(url, true);
            if (img) a.append(text("image: " + (label || url)));
            else inline(label, a);
            parent.append(a);
          } else {
            if (img) parent.append(text("image: " + label));
            else inline(label, parent);
            parent.append(text(" (" + url + ")"));
          }
          i = end + 1;
          continue;
        }
      }
    }
    if (c === "<") {
      const m = /^<(https?:\/\/[^\s<>]+)>/.exec(s.slice(i));
      if (m) {
        flush();
        const a = document.createElement("a");
        a.href = m[1];
        a.rel = "noopener noreferrer";
        a.target = "_blank";
        a.append(text(m[1]));
        parent.append(a);
        i += m[0].length;
        continue;
      }
    }
    buf += c;
    i++;
  }
  flush();
}

function matchBracket(s, i) {
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    if (s[j] === "\\") { j++; continue; }
    if (s[j] === "[") depth++;
    else if (s[j] === "]" && --depth === 0) return j;
    else if (s[j] === "\n" && s[j + 1] === "\n") return -1;
  }
  return -1;
}

const FENCE_LINE = /^ {0,3}(`{3,}|~{3,})/;
const CONTINUES = /^(\s|[-*+] |\d{1,9}[.)] |>|\|)/;

// stableCut returns the end of the longest prefix of text (from "from"
// on) whose rendering no text appended later can change: rendering
// text[:cut] and text[cut:] apart gives what rendering text does. A
// streaming message renders that prefix once.
export function stableCut(text, from = 0) {
  let cut = from, fences = 0, pos = from;
  for (;;) {
    const nl = text.indexOf("\n", pos);
    if (nl < 0) return cut;
    const line = text.slice(pos, nl);
    if (FENCE_LINE.test(line)) fences++;
    // A blank line, outside a fence, followed by a complete line that
    // starts a new block.
    if (line.trim() === "" && fences % 2 === 0 && pos > from) {
      const next = text.indexOf("\n", nl + 1);
      if (next < 0) return cut;
      const following = text.slice(nl + 1, next);
      if (following.trim() !== "" && !CONTINUES.test(following)) cut = nl + 1;
    }
    pos = nl + 1;
  }
}

