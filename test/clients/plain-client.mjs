#!/usr/bin/env node
// A client on the official ACP TypeScript SDK, unmodified, that knows
// nothing of coding-agent's extensions and asks for none: it must receive no
// _coding-agent/* traffic (PROTOCOL.md §2, "extensions are opt-in"), and the
// SDK must not log "Method not found". The same scenario is run once more by
// a client that asks for the extensions, which must receive files_changed:
// the control that shows the first run could have failed.
//
// A bash command creates a file in the session; session/close delivers the
// change report of the burst in progress before it answers, so every
// files_changed the agent would send is on the wire before that answer.
//
//   node plain-client.mjs BINARY WORKSPACE DATADIR
import { spawn } from "node:child_process";
import { Readable, Transform, Writable } from "node:stream";
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { check, checkEq, summary } from "./common.mjs";

const [bin, ws, dataDir] = process.argv.slice(2);
if (!bin || !ws || !dataDir) {
  console.error("usage: node plain-client.mjs BINARY WORKSPACE DATADIR");
  process.exit(2);
}

// Everything the SDK logs, to look for "Method not found".
const logged = [];
const consoleError = console.error;
console.error = (...args) => { logged.push(args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")); consoleError(...args); };

async function run(name, clientCapabilities) {
  const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
  // Record the method of every message the agent sends, from the raw lines.
  const methods = [];
  let rest = "";
  const tap = new Transform({
    transform(chunk, _enc, done) {
      rest += chunk;
      let i;
      while ((i = rest.indexOf("\n")) >= 0) {
        const line = rest.slice(0, i);
        rest = rest.slice(i + 1);
        try { const m = JSON.parse(line); if (m.method) methods.push(m.method); } catch { methods.push("(invalid JSON)"); }
      }
      done(null, chunk);
    },
  });
  child.stdout.pipe(tap);
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(tap));
  const app = acp.client({ name: `coding-agent-e2e-${name}` })
    .onNotification(acp.methods.client.session.update, () => {});
  let atClose = [];
  try {
    await app.connectWith(stream, async (agent) => {
      await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities });
      const { sessionId } = await agent.request(acp.methods.agent.session.new, {
        cwd: ws, mcpServers: [], _meta: { "coding-agent": { preset: "full-access" } },
      });
      // A request from the client to an extension works whatever it asked for.
      const r = await agent.request("_coding-agent/tools/call", {
        sessionId, name: "bash", arguments: { command: `echo made > ${name}.txt` },
      });
      checkEq(r.isError, false, `${name}: bash isError`);
      check(existsSync(join(ws, `${name}.txt`)), `${name}: the command made its file`);
      await agent.request("session/close", { sessionId });
      atClose = methods.slice();
    });
  } finally {
    child.stdin.end();
  }
  const code = await exited;
  checkEq(code, 0, `${name}: exit status (stderr: ${stderr})`);
  return { atClose, all: methods };
}

let failed = false;
try {
  const plain = await run("plain", {});
  const ext = plain.all.filter((m) => m.startsWith("_coding-agent/"));
  checkEq(JSON.stringify(ext), "[]", "plain client: _coding-agent/* messages received");
  check(plain.atClose.includes("session/update"), "plain client: session/update received");

  const opted = await run("opted-in", { _meta: { "coding-agent": { extensions: true } } });
  check(opted.atClose.includes("_coding-agent/files_changed"),
    `opted-in client: files_changed before session/close answered (got ${JSON.stringify(opted.atClose)})`);

  const notFound = logged.filter((l) => /method not found|-32601/i.test(l));
  checkEq(JSON.stringify(notFound), "[]", "SDK logged Method not found");
} catch (err) {
  console.error("FAIL: unexpected error:", err);
  failed = true;
}
process.exit(summary("plain-client") > 0 || failed ? 1 : 0);
