#!/usr/bin/env node
// End-to-end client built on vscode-jsonrpc, unmodified: the Content-Length
// framing VS Code extensions use. Same workflow as acp-client.mjs: open a
// session, call tools directly, answer permission requests, check the disk.
//
//   node lsp-client.mjs BINARY WORKSPACE DATADIR
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import rpc from "vscode-jsonrpc/node.js";
import { check, checkEq, decide, summary } from "./common.mjs";

const [bin, ws, dataDir] = process.argv.slice(2);
if (!bin || !ws || !dataDir) {
  console.error("usage: node lsp-client.mjs BINARY WORKSPACE DATADIR");
  process.exit(2);
}

const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => { stderr += d; });
const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(child.stdout),
  new rpc.StreamMessageWriter(child.stdin),
);
const updates = [];
const permissions = [];
conn.onNotification("session/update", (p) => updates.push(p));
conn.onRequest("session/request_permission", (p) => { permissions.push(p); return decide(p); });
conn.listen();

let failed = false;
try {
  const init = await conn.sendRequest("initialize", { protocolVersion: 1, clientCapabilities: {} });
  checkEq(init.protocolVersion, 1, "initialize: protocolVersion");

  const sess = await conn.sendRequest("session/new", {
    cwd: ws, mcpServers: [], _meta: { "coding-agent": { tools: ["read", "write", "write"], preset: "read-only" } },
  });
  const sid = sess.sessionId;
  check(typeof sid === "string", "session/new: sessionId");

  const read = await conn.sendRequest("_coding-agent/tools/call", { sessionId: sid, name: "read", arguments: { path: "hello.txt" } });
  check(read.content[0].text.includes("hello world"), "read: content");

  const w = await conn.sendRequest("_coding-agent/tools/call", { sessionId: sid, name: "write", arguments: { path: "allowed.txt", content: "via lsp framing\n" } });
  checkEq(w.isError, false, `write (allowed): isError (${w.content?.[0]?.text})`);
  checkEq(readFileSync(join(ws, "allowed.txt"), "utf8"), "via lsp framing\n", "write (allowed): file");
  checkEq(permissions.length, 1, "write (allowed): permission asked");

  const r = await conn.sendRequest("_coding-agent/tools/call", { sessionId: sid, name: "write", arguments: { path: "rejected.txt", content: "no\n" } });
  checkEq(r.isError, true, "write (rejected): isError");
  check(!existsSync(join(ws, "rejected.txt")), "write (rejected): no file");
  checkEq(permissions.length, 2, "write (rejected): permission asked");

  try {
    await conn.sendRequest("_coding-agent/tools/call", { sessionId: sid, name: "bash", arguments: { command: "true" } });
    check(false, "bash is not enabled in this session: expected an error");
  } catch (err) {
    checkEq(err.code, -32602, "tool not enabled: -32602");
  }
  check(updates.some((u) => u.update.sessionUpdate === "tool_call" && u.update.title === "Write allowed.txt"), "tool_call title");
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`);
} finally {
  conn.dispose();
  child.stdin.end();
}
const code = await new Promise((res) => child.on("exit", (c) => res(c)));
checkEq(code, 0, "agent exit status after stdin closed");
if (failed) console.error(stderr);
process.exit(summary("lsp-client") || failed ? 1 : 0);
