// Text hygiene for everything a model or a tool produced. The page never
// turns such text into markup: it goes into text nodes, after
// neutralize() has made every control character visible, so that a
// carriage return, an escape sequence, a line separator or a bidi
// override cannot hide or reorder what a person reads.

const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

// neutralize returns s with control characters replaced by visible
// stand-ins: C0 controls by their Control Pictures (␛ for ESC, ␍ for CR),
// DEL by ␡, C1 controls, U+2028/2029 and bidi controls by ⟨U+XXXX⟩.
// Newlines and tabs are kept unless oneLine is set, when a newline
// becomes ␤ (titles, names, one-line fields).
export function neutralize(s, oneLine = false) {
  s = String(s ?? "");
  if (!/[\u0000-\u001F\u007F-\u009F\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/.test(s)) return s;
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if ((c === 0x0a || c === 0x09) && !oneLine) out += ch;
    else if (c === 0x0a) out += "\u2424";
    else if (c === 0x09) out += " ";
    else if (c < 0x20) out += String.fromCodePoint(0x2400 + c);
    else if (c === 0x7f) out += "\u2421";
    else if ((c >= 0x80 && c <= 0x9f) || c === 0x2028 || c === 0x2029 || BIDI.test(ch)) {
      out += "\u27e8U+" + c.toString(16).toUpperCase().padStart(4, "0") + "\u27e9";
    } else out += ch;
  }
  return out;
}

// terminalText prepares command output: colour and cursor escape sequences
// (CSI and OSC) are dropped, CRLF becomes LF, and what is left is
// neutralized, so a lone CR or a stray escape shows instead of acting.
export function terminalText(s) {
  s = String(s ?? "")
    .replace(/\u001b\[[0-9;?]*[ -\/]*[@-~]/g, "")
    .replace(/\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)/g, "")
    .replace(/\r\n/g, "\n");
  return neutralize(s);
}

// el creates an element with attributes and children (strings become
// neutralized text nodes).
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = neutralize(v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c == null || c === false) continue;
    e.append(typeof c === "string" ? document.createTextNode(neutralize(c)) : c);
  }
  return e;
}

// setText replaces e's content with the neutralized text s.
export function setText(e, s, oneLine = false) {
  const t = neutralize(s, oneLine);
  if (e.textContent !== t) e.textContent = t;
}
