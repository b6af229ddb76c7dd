#!/usr/bin/env node
// A real prompt turn through the official ACP TypeScript SDK, unmodified:
// the model (a fake server speaking a provider's real streaming format,
// started by the Go test) writes a file, which needs approval, and reads
// another; then a second prompt runs a long command that the client
// cancels; then a new agent process loads the session and replays it.
//
//   node acp-prompt.mjs BINARY WORKSPACE DATADIR
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { check, checkEq, summary } from "./common.mjs";

const [bin, ws, dataDir] = process.argv.slice(2);

function start(onUpdate, onPermission) {
  const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const app = acp
    .client({ name: "coding-agent-e2e-prompt" })
    .onNotification(acp.methods.client.session.update, ({ params }) => onUpdate(params))
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => onPermission(params))
    .onNotification("*", () => {});
  const exited = new Promise((res) => child.on("exit", (c) => res(c)));
  return { child, stream, app, exited, stderr: () => stderr };
}

const updates = [];
const permissions = [];
let waiters = [];
function onUpdate(p) {
  updates.push(p);
  waiters = waiters.filter((w) => !w(p));
}
function waitFor(pred) {
  return new Promise((res) => waiters.push((p) => (pred(p) ? (res(p), true) : false)));
}

let failed = false;
let sessionId;
const a = start(onUpdate, (p) => {
  permissions.push(p);
  return { outcome: { outcome: "selected", optionId: "allow_once" } };
});
try {
  await a.app.connectWith(a.stream, async (agent) => {
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const sess = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
    sessionId = sess.sessionId;

    const res = await agent.request(acp.methods.agent.session.prompt, {
      sessionId, prompt: [{ type: "text", text: "Create notes.txt, then tell me what hello.txt says." }],
    });
    checkEq(res.stopReason, "end_turn", "prompt 1: stopReason");
    checkEq(readFileSync(join(ws, "notes.txt"), "utf8"), "hi\n", "prompt 1: the approved write happened");
    checkEq(permissions.length, 1, "prompt 1: one permission request (the write)");
    checkEq(permissions[0]?.toolCall.toolCallId, updates.find((u) => u.update.sessionUpdate === "tool_call")?.update.toolCallId, "permission refers to the streamed tool call");

    const kinds = updates.map((u) => u.update.sessionUpdate);
    check(kinds.includes("agent_message_chunk"), "prompt 1: message chunks");
    const calls = updates.filter((u) => u.update.sessionUpdate === "tool_call").map((u) => u.update);
    checkEq(calls.map((c) => c.kind).join(","), "edit,read", "prompt 1: tool calls announced in order with kinds");
    const titles = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.title).map((u) => u.update.title);
    check(titles.includes("Write notes.txt") && titles.includes("Read hello.txt"), `prompt 1: titles follow the streamed arguments (${titles})`);
    const statuses = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status).map((u) => `${u.update.toolCallId}:${u.update.status}`);
    const [w, r] = calls.map((c) => c.toolCallId);
    checkEq(statuses.join(","), `${w}:in_progress,${w}:completed,${r}:in_progress,${r}:completed`, "prompt 1: sequential execution");
    const text = updates.filter((u) => u.update.sessionUpdate === "agent_message_chunk").map((u) => u.update.content.text).join("");
    check(text.includes("hello world"), `prompt 1: final answer (${text})`);
    const ids = new Set(updates.filter((u) => u.update.sessionUpdate === "agent_message_chunk").map((u) => u.update.messageId));
    checkEq(ids.size, 2, "prompt 1: one messageId per assistant message");

    // Prompt 2: a long command, cancelled once it runs.
    const running = waitFor((p) => p.update.sessionUpdate === "tool_call_update" && p.update.status === "in_progress");
    const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Wait a long time." }] });
    await running;
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const res2 = await pending;
    checkEq(res2.stopReason, "cancelled", "prompt 2: cancelled");
    const last = updates.filter((u) => u.update.sessionUpdate === "tool_call_update" && u.update.status).pop();
    checkEq(last?.update.status, "failed", "prompt 2: the running call is failed");
  });
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`, err?.data ? JSON.stringify(err.data) : "");
} finally {
  a.child.stdin.end();
}
checkEq(await a.exited, 0, "agent 1 exit status");
if (failed) console.error(a.stderr());

// A new process loads the stored session and replays it.
const replay = [];
const b = start((p) => replay.push(p), () => ({ outcome: { outcome: "cancelled" } }));
try {
  await b.app.connectWith(b.stream, async (agent) => {
    await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    const list = await agent.request(acp.methods.agent.session.list, {});
    check(list.sessions.some((s) => s.sessionId === sessionId), "restart: session/list has the session");
    await agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
    const kinds = replay.map((u) => u.update.sessionUpdate);
    check(kinds.includes("user_message_chunk") && kinds.includes("tool_call") && kinds.includes("agent_message_chunk"), `restart: replay (${[...new Set(kinds)]})`);
    check(replay.every((u) => u.sessionId === sessionId), "restart: replay carries the session id");
  });
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`);
} finally {
  b.child.stdin.end();
}
checkEq(await b.exited, 0, "agent 2 exit status");
if (failed) console.error(b.stderr());
process.exit(summary("acp-prompt") || failed ? 1 : 0);
