#!/usr/bin/env node
// Plays an editor against the real binary with the official ACP SDK: opens
// documents, types into one (unsaved), and checks that the agent reports
// every change on disk with the right origin, shows bash changes as diffs,
// and never clobbers the unsaved buffer.
//
//   node editor-client.mjs BINARY WORKSPACE DATADIR
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import * as acp from "@agentclientprotocol/sdk";
import { check, checkEq, summary } from "./common.mjs";

const [bin, ws, dataDir] = process.argv.slice(2);
const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => { stderr += d; });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const changes = [];
let waiters = [];
function onChange(c) {
  changes.push(c);
  waiters = waiters.filter((w) => !w(c));
}
// waitChange resolves with the first reported change (past or future) that
// matches pred, or rejects after 10 s.
function waitChange(pred, what) {
  const seen = changes.find(pred);
  if (seen) return Promise.resolve(seen);
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no files_changed: ${what}`)), 10000);
    waiters.push((c) => (pred(c) ? (clearTimeout(timer), res(c), true) : false));
  });
}

const app = acp
  .client({ name: "coding-agent-e2e-editor" })
  .onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
  .onNotification("*", ({ method, params }) => {
    if (method === "_coding-agent/files_changed") for (const c of params.changes) onChange({ ...c, sessionId: params.sessionId });
  });

const file = (name) => join(ws, name);
const uri = (name) => pathToFileURL(file(name)).href;
const lastCallId = () => updates.filter((u) => u.update.sessionUpdate === "tool_call").pop()?.update.toolCallId;

let failed = false;
try {
  await app.connectWith(stream, async (agent) => {
    // This client implements the _coding-agent/ extensions, so it asks for them.
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: 1, clientCapabilities: { _meta: { "coding-agent": { extensions: true } } },
    });
    checkEq(init.agentCapabilities._meta["coding-agent"].documentSync?.version, 1, "initialize: documentSync");
    const { sessionId } = await agent.request(acp.methods.agent.session.new, {
      cwd: ws, mcpServers: [], _meta: { "coding-agent": { preset: "full-access" } },
    });
    await agent.notify("document/didOpen", { sessionId, uri: uri("a.txt"), languageId: "plaintext", version: 1, text: "one\n" });
    await agent.notify("document/didOpen", { sessionId, uri: uri("b.txt"), languageId: "plaintext", version: 1, text: "keep\n" });
    await agent.notify("document/didChange", { sessionId, uri: uri("b.txt"), version: 2, contentChanges: [
      { range: { start: { line: 0, character: 4 }, end: { line: 0, character: 4 } }, text: " — naïve 😀 edit" },
    ] });

    // bash changes an open file: attributed to that call, shown as a diff.
    const r1 = await agent.request("_coding-agent/tools/call", { sessionId, name: "bash", arguments: { command: "sed -i s/one/two/ a.txt" } });
    checkEq(r1.isError, false, "bash sed: isError");
    const bashId = lastCallId();
    const c1 = await waitChange((c) => c.path === file("a.txt"), "a.txt after sed");
    checkEq(c1.kind, "modified", "sed: kind");
    checkEq(c1.origin?.toolCallId, bashId, "sed: origin.toolCallId");
    checkEq(c1.origin?.tool, "bash", "sed: origin.tool");
    checkEq(c1.open, true, "sed: open");
    checkEq(c1.uri, uri("a.txt"), "sed: uri as the editor sent it");
    const final = updates.filter((u) => u.update.toolCallId === bashId && u.update.status === "completed").pop();
    const diff = final?.update.content?.find((c) => c.type === "diff");
    check(diff?.oldText === "one\n" && diff?.newText === "two\n", `sed: diff on the bash call (${JSON.stringify(diff)})`);

    // The unsaved buffer is never clobbered.
    const r2 = await agent.request("_coding-agent/tools/call", { sessionId, name: "write", arguments: { path: "b.txt", content: "clobbered\n" } });
    checkEq(r2.isError, true, "write over an unsaved buffer: isError");
    check(/b\.txt/.test(r2.content[0].text) && /unsaved/.test(r2.content[0].text), `write: error names the file (${r2.content[0].text})`);
    checkEq(readFileSync(file("b.txt"), "utf8"), "keep\n", "write: disk unchanged");

    // Another process writes: external.
    writeFileSync(file("ext.txt"), "from elsewhere\n");
    const c2 = await waitChange((c) => c.path === file("ext.txt"), "ext.txt");
    checkEq(c2.kind, "created", "external: kind");
    checkEq(c2.origin, null, "external: origin null");

    // Our own atomic edit: one modified, attributed to the edit.
    const before = changes.length;
    const r3 = await agent.request("_coding-agent/tools/call", { sessionId, name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "two", newText: "three" }] } });
    checkEq(r3.isError, false, `edit: isError (${r3.content?.[0]?.text})`);
    const editId = lastCallId();
    const c3 = await waitChange((c, i) => c.path === file("a.txt") && c.origin?.toolCallId === editId, "a.txt after edit");
    checkEq(c3.kind, "modified", "edit: kind");
    // Give a second report a chance to show up before counting: it would
    // come in the same batch or the next one, both delivered by now if
    // another change (a marker written after the edit) has been seen.
    writeFileSync(file("marker.txt"), "x");
    await waitChange((c) => c.path === file("marker.txt"), "marker");
    const forA = changes.slice(before).filter((c) => c.path === file("a.txt"));
    checkEq(forA.length, 1, "edit: exactly one report for the atomic replace");
    check(!changes.some((c) => /\.tmp|coding-agent-/.test(c.path)), "edit: temp file never reported");
  });
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`);
} finally {
  child.stdin.end();
}
checkEq(await new Promise((res) => child.on("exit", res)), 0, "agent exit status");
if (failed) console.error(stderr);
process.exit(summary("editor-client") || failed ? 1 : 0);
