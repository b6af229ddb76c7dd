// Unified line diffs for the diff content of tool calls (ACP gives the old
// and the new text). Myers' O(ND) algorithm on what is left after the
// common prefix and suffix; a change too large to diff quickly is shown as
// a whole replacement.

const CONTEXT = 3;
const MAX_D = 2000;

function splitLines(s) {
  if (s == null || s === "") return [];
  const lines = s.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

// editScript returns ops over a and b: [" ", line] kept, ["-", line],
// ["+", line].
function editScript(a, b) {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const A = a.slice(pre, a.length - suf), B = b.slice(pre, b.length - suf);
  const mid = myers(A, B) ?? [...A.map((l) => ["-", l]), ...B.map((l) => ["+", l])];
  return [...a.slice(0, pre).map((l) => [" ", l]), ...mid, ...a.slice(a.length - suf).map((l) => [" ", l])];
}

function myers(a, b) {
  const n = a.length, m = b.length, max = Math.min(n + m, MAX_D);
  const off = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) { x++; y++; }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, off, d);
    }
  }
  return null;
}

function backtrack(trace, a, b, off, dEnd) {
  const ops = [];
  let x = a.length, y = b.length;
  for (let d = dEnd; d > 0; d--) {
    const v = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? k + 1 : k - 1;
    const px = v[off + prevK], py = px - prevK;
    while (x > px && y > py) { ops.push([" ", a[--x]]); y--; }
    if (x === px) ops.push(["+", b[--y]]);
    else ops.push(["-", a[--x]]);
  }
  while (x > 0 && y > 0) { ops.push([" ", a[--x]]); y--; }
  return ops.reverse();
}

// unifiedDiff returns the lines of a unified diff with 3 lines of context:
// [{kind: "@"|" "|"-"|"+", text}].
export function unifiedDiff(oldText, newText) {
  const ops = editScript(splitLines(oldText), splitLines(newText));
  const out = [];
  let i = 0, oldLine = 1, newLine = 1;
  while (i < ops.length) {
    if (ops[i][0] === " ") { i++; oldLine++; newLine++; continue; }
    // A hunk: back up to CONTEXT lines before, run until CONTEXT*2 kept
    // lines in a row (or the end).
    let start = i, os = oldLine, ns = newLine;
    for (let c = 0; c < CONTEXT && start > 0 && ops[start - 1][0] === " "; c++) { start--; os--; ns--; }
    let end = i, kept = 0;
    while (end < ops.length) {
      if (ops[end][0] === " ") { if (++kept > CONTEXT * 2) break; } else kept = 0;
      end++;
    }
    end -= Math.max(0, kept - CONTEXT);
    let oc = 0, nc = 0;
    const body = [];
    for (let j = start; j < end; j++) {
      const [kind, text] = ops[j];
      if (kind !== "+") oc++;
      if (kind !== "-") nc++;
      body.push({ kind, text });
    }
    out.push({ kind: "@", text: `@@ -${oc ? os : os - 1},${oc} +${nc ? ns : ns - 1},${nc} @@` }, ...body);
    for (let j = i; j < end; j++) {
      if (ops[j][0] !== "+") oldLine++;
      if (ops[j][0] !== "-") newLine++;
    }
    i = end;
  }
  return out;
}
