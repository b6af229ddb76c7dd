#!/usr/bin/env node
// End-to-end client built on the official ACP TypeScript SDK, unmodified.
// It starts the coding-agent binary, opens a session, calls tools directly,
// answers permission requests (allowing one change, rejecting another) and
// checks the outcome on disk. Exit 0 when every check passed.
//
//   node acp-client.mjs BINARY WORKSPACE DATADIR
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { check, checkEq, decide, summary } from "./common.mjs";

const [bin, ws, dataDir] = process.argv.slice(2);
if (!bin || !ws || !dataDir) {
  console.error("usage: node acp-client.mjs BINARY WORKSPACE DATADIR");
  process.exit(2);
}

const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => { stderr += d; });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
const app = acp
  .client({ name: "coding-agent-e2e" })
  .onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    return decide(params);
  })
  .onNotification("*", () => {});

async function expectError(p, code, what) {
  try {
    await p;
    check(false, `${what}: expected error ${code}, got a result`);
  } catch (err) {
    checkEq(err.code, code, `${what}: error code (${err.message})`);
    return err;
  }
}

let failed = false;
try {
  await app.connectWith(stream, async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "coding-agent-e2e", version: "0.0.1" },
    });
    checkEq(init.protocolVersion, 1, "initialize: protocolVersion");
    checkEq(init.agentInfo?.name, "coding-agent", "initialize: agentInfo.name");
    const meta = init.agentCapabilities?._meta?.["coding-agent"];
    check(meta?.directTools === true, "initialize: _meta coding-agent directTools");
    checkEq(JSON.stringify(meta?.tools), JSON.stringify(["read", "bash", "edit", "write"]), "initialize: tools");

    const list = await agent.request("_coding-agent/tools/list", {});
    checkEq(list.tools.map((t) => t.name).join(","), "read,bash,edit,write", "tools/list names");
    check(list.tools.every((t) => t.inputSchema?.type === "object"), "tools/list schemas");

    const sess = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    check(typeof sess.sessionId === "string" && sess.sessionId.length > 0, "session/new: sessionId");
    checkEq(sess.modes?.currentModeId, "read-only", "session/new: default mode");
    checkEq(sess.configOptions?.[0]?.id, "preset", "session/new: preset config option");
    const sid = sess.sessionId;

    // A direct read in the session: result plus the same tool_call updates a model call gets.
    const read = await agent.request("_coding-agent/tools/call", { sessionId: sid, name: "read", arguments: { path: "hello.txt" } });
    checkEq(read.isError, false, "read: isError");
    check(read.content[0].text.includes("hello world"), "read: content");
    const calls = updates.filter((u) => u.update.sessionUpdate === "tool_call");
    checkEq(calls.length, 1, "read: one tool_call update");
    checkEq(calls[0]?.update.title, "Read hello.txt", "read: title");
    checkEq(calls[0]?.update.kind, "read", "read: kind");
    const done = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed");
    checkEq(done.length, 1, "read: completed update");

    // A write outside the preset asks for approval; the client allows it.
    const w = await agent.request("_coding-agent/tools/call", {
      sessionId: sid, name: "write",
      arguments: { path: "allowed.txt", content: "approved\n", justification: "Create the file you asked for." },
    });
    checkEq(w.isError, false, `write (allowed): isError (${w.content?.[0]?.text})`);
    checkEq(readFileSync(join(ws, "allowed.txt"), "utf8"), "approved\n", "write (allowed): file on disk");
    checkEq(permissions.length, 1, "write (allowed): one permission request");
    const p0 = permissions[0];
    checkEq(p0?.options.map((o) => o.optionId).join(","), "allow_once,allow_always,reject_once", "permission: options");
    const diff = p0?.toolCall.content?.find((c) => c.type === "diff");
    check(diff && diff.oldText === null && diff.newText === "approved\n", "permission: diff of a new file");
    check(p0?.toolCall.content?.some((c) => c.type === "content" && c.content.text === "The model's reason: Create the file you asked for."), "permission: justification text");
    check(p0?.toolCall.content?.some((c) => c.type === "content" && c.content.text.startsWith("Policy: ")), "permission: the policy's reason beside the justification");
    checkEq(p0?.toolCall._meta?.["coding-agent"]?.request, "file-change", "permission: _meta request");

    // An edit the client rejects: not dispatched, the file is unchanged.
    const e = await agent.request("_coding-agent/tools/call", {
      sessionId: sid, name: "edit",
      arguments: { path: "hello.txt", edits: [{ oldText: "world", newText: "there" }] },
    });
    checkEq(e.isError, true, "edit (rejected): isError");
    check(/reject/i.test(e.content[0].text), `edit (rejected): says rejected (${e.content[0].text})`);
    checkEq(readFileSync(join(ws, "hello.txt"), "utf8"), "hello world\n", "edit (rejected): file unchanged");
    checkEq(permissions.length, 2, "edit (rejected): permission asked");
    check(typeof permissions[1]?.toolCall._meta?.["coding-agent"]?.reason === "string", "permission: policy reason");

    // Standalone call: no approval context, so the mutation fails without asking.
    const s = await agent.request("_coding-agent/tools/call", {
      name: "write", cwd: ws, arguments: { path: "standalone.txt", content: "x" },
    });
    checkEq(s.isError, true, "standalone write under read-only: isError");
    check(!existsSync(join(ws, "standalone.txt")), "standalone write: no file");
    checkEq(permissions.length, 2, "standalone write: no permission request");

    // The client changes the preset; the agent confirms it.
    await agent.request(acp.methods.agent.session.setMode, { sessionId: sid, modeId: "workspace-write" });
    check(updates.some((u) => u.update.sessionUpdate === "current_mode_update" && u.update.currentModeId === "workspace-write"), "set_mode: current_mode_update");
    const e2 = await agent.request("_coding-agent/tools/call", {
      sessionId: sid, name: "edit",
      arguments: { path: "hello.txt", edits: [{ oldText: "world", newText: "ACP" }] },
    });
    checkEq(e2.isError, false, `edit under workspace-write: isError (${e2.content?.[0]?.text})`);
    checkEq(readFileSync(join(ws, "hello.txt"), "utf8"), "hello ACP\n", "edit under workspace-write: file");
    checkEq(permissions.length, 2, "edit under workspace-write: no permission request");
    const editDone = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status === "completed").pop();
    const editDiff = editDone?.update.content?.find((c) => c.type === "diff");
    check(editDiff && editDiff.oldText === "hello world\n" && editDiff.newText === "hello ACP\n", "edit: diff content on the final update");
    check(editDone?.update.locations?.[0]?.path === join(ws, "hello.txt"), "edit: locations");

    // Errors: unknown tool, unknown session, no model.
    const bad = await expectError(agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [], _meta: { "coding-agent": { tools: ["read", "grep"] } } }), -32602, "session/new with an unknown tool");
    check(/read, bash, edit, write/.test(bad?.message ?? ""), `unknown tool: message lists valid names (${bad?.message})`);
    await expectError(agent.request("_coding-agent/tools/call", { sessionId: "sess_nope", name: "read", arguments: { path: "x" } }), -32002, "unknown session");
    await expectError(agent.request(acp.methods.agent.session.prompt, { sessionId: sid, prompt: [{ type: "text", text: "hi" }] }), -32000, "prompt without a model (auth_required)");

    await agent.request(acp.methods.agent.session.close, { sessionId: sid });
  });
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`, err?.data ? JSON.stringify(err.data) : "");
} finally {
  child.stdin.end();
}
const code = await new Promise((res) => child.on("exit", (c) => res(c)));
checkEq(code, 0, "agent exit status after stdin closed");
if (failed) console.error(stderr);
process.exit(summary("acp-client") || failed ? 1 : 0);
