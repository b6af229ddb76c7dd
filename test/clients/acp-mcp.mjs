#!/usr/bin/env node
// MCP servers through the official ACP TypeScript SDK, unmodified: the
// client passes its mcpServers in session/new; the model (a fake server
// speaking Anthropic's streaming format, started by the Go test) calls their
// tools. A write through server-filesystem is asked and allowed, another
// asked and rejected; a readOnlyHint tool runs without asking; arguments
// that fail the schema are never dispatched; a tool the server adds
// (tools/list_changed) is there for the next model request; servers that
// exit or hang at start are reported and the session works; a long-running
// tool of server-everything reports progress and is cancelled.
//
//   node acp-mcp.mjs BINARY WORKSPACE DATADIR SERVERS.json
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as acp from "@agentclientprotocol/sdk";
import { check, checkEq, summary } from "./common.mjs";

// A write of rejected.txt is rejected; a write of allowed.txt is allowed for
// the rest of the session ("always allow this tool").
function decide(params) {
  const path = params.toolCall?.rawInput?.path ?? "";
  const optionId = path.endsWith("allowed.txt") ? "allow_always" : "reject_once";
  return { outcome: { outcome: "selected", optionId } };
}

const [bin, ws, dataDir, serversFile] = process.argv.slice(2);
const mcpServers = JSON.parse(readFileSync(serversFile, "utf8"));

const child = spawn(bin, ["serve", "--data-dir", dataDir], { cwd: ws, stdio: ["pipe", "pipe", "pipe"] });
let stderr = "";
child.stderr.on("data", (d) => { stderr += d; });
const exited = new Promise((res) => child.on("exit", (c) => res(c)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const updates = [];
const permissions = [];
let waiters = [];
const app = acp
  .client({ name: "coding-agent-e2e-mcp" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    updates.push(params);
    waiters = waiters.filter((w) => !w(params));
  })
  .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
    permissions.push(params);
    return decide(params);
  })
  .onNotification("*", () => {});
const waitFor = (pred) => new Promise((res) => waiters.push((p) => (pred(p) ? (res(p), true) : false)));

const of = (id, kind) => updates.filter((u) => u.update.toolCallId === id && (!kind || u.update.sessionUpdate === kind)).map((u) => u.update);
const statuses = (id) => of(id).filter((u) => u.status).map((u) => u.status).join(",");
const finalText = (id) => (of(id, "tool_call_update").filter((u) => u.status).pop()?.content ?? []).map((c) => c.content?.text ?? "").join("\n");

let failed = false;
try {
  await app.connectWith(stream, async (agent) => {
    const init = await agent.request(acp.methods.agent.initialize, { protocolVersion: 1, clientCapabilities: {} });
    checkEq(JSON.stringify(init.agentCapabilities.mcpCapabilities), `{"http":true,"sse":true}`, "initialize: mcpCapabilities");
    const sess = await agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers });
    const sessionId = sess.sessionId;
    const status = Object.fromEntries((sess._meta?.["coding-agent"]?.mcpServers ?? []).map((m) => [m.name, m]));
    check(status.fs?.started && status.fs.tools > 5 && status.everything?.started && status.fx?.started, `session/new _meta: started servers (${JSON.stringify(status)})`);
    check(!status.quits?.started && /exit status 3/.test(status.quits?.error ?? ""), "session/new _meta: the server that exited, with its error");
    check(!status.hangs?.started && /timed out/.test(status.hangs?.error ?? ""), "session/new _meta: the server that hung");

    const res = await agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Use the MCP tools." }] });
    checkEq(res.stopReason, "end_turn", "prompt 1: stopReason");

    // The servers that did not start are told, by name, with their error.
    const notice = updates.find((u) => u.update.sessionUpdate === "agent_message_chunk")?.update.content.text ?? "";
    check(/"quits" did not start: exited at start.*exit status 3.*giving up/s.test(notice), `notice names the server that exited: ${notice}`);
    check(/"hangs" did not start: timed out after 2s/.test(notice), `notice names the server that hung: ${notice}`);
    check(!notice.includes(`"fs"`), "config.json's fs (a failing command) lost to the session's fs");

    // Approval asked and rejected, then asked and always allowed; then the
    // same tool is not asked again.
    checkEq(permissions.length, 2, "two permission requests (the first two writes)");
    const p0 = permissions[0];
    checkEq(p0?.toolCall.toolCallId, "c1", "the first request is the first write");
    checkEq(permissions[1]?.toolCall.toolCallId, "c2", "the second request is the second write");
    checkEq(p0?.toolCall.title, "fs · write_file", "request title");
    checkEq(p0?.options.map((o) => o.kind).join(","), "allow_once,allow_always,reject_once", "request options");
    const body = (p0?.toolCall.content ?? []).map((c) => c.content?.text ?? "").join("\n");
    check(body.includes("MCP server: fs") && body.includes("Tool: write_file") && body.includes("rejected.txt"), `request shows server, tool and arguments: ${body}`);
    checkEq(readFileSync(join(ws, "allowed.txt"), "utf8"), "yes", "the allowed write happened");
    check(!existsSync(join(ws, "rejected.txt")), "the rejected write did not happen");
    checkEq(statuses("c1"), "pending,failed", "c1 (rejected) lifecycle: never in_progress");
    checkEq(statuses("c2"), "pending,in_progress,completed", "c2 (allowed) lifecycle");
    checkEq(statuses("c11"), "pending,in_progress,completed", "c11 (always allowed) lifecycle");
    checkEq(readFileSync(join(ws, "also-allowed.txt"), "utf8"), "too", "the always-allowed write happened without asking");
    checkEq(of("c1", "tool_call")[0]?.kind, "other", "a tool that is not read-only is kind other");
    checkEq(of("c1", "tool_call")[0]?.name, "mcp__fs__write_file", "the tool call's name");

    // A readOnlyHint tool is not asked.
    checkEq(of("c3", "tool_call")[0]?.title, "everything · echo", "echo title");
    checkEq(of("c3", "tool_call")[0]?.kind, "read", "a readOnlyHint tool is kind read");
    checkEq(statuses("c3"), "pending,in_progress,completed", "echo ran");
    check(finalText("c3").includes("hi there"), `echo's result: ${finalText("c3")}`);

    // Invalid arguments: failed, never in_progress, never dispatched.
    checkEq(statuses("c4"), "pending,failed", "invalid arguments are never in_progress");
    check(finalText("c4").includes("input schema"), `the schema error is returned: ${finalText("c4")}`);
    checkEq(finalText("c6").trim(), "0", "the server saw no call of add");

    // A tool added by the server (tools/list_changed) is there for the next request.
    checkEq(statuses("c7"), "pending,in_progress,completed", "the grown tool ran");
    checkEq(finalText("c7").trim(), "grown", "the grown tool's result");

    // structuredContent in rawOutput; an image as content.
    const img = of("c8", "tool_call_update").filter((u) => u.status).pop();
    check((img?.content ?? []).some((c) => c.content?.type === "image" && c.content?.mimeType === "image/png"), "the image is tool call content");
    const sc = of("c9", "tool_call_update").filter((u) => u.status).pop();
    check(sc?.rawOutput?.structuredContent?.temperature !== undefined, `structuredContent in rawOutput: ${JSON.stringify(sc?.rawOutput)}`);

    // Prompt 2: a long-running tool reports progress, then is cancelled.
    const progressed = waitFor((p) => p.update.toolCallId === "c10" && p.update.sessionUpdate === "tool_call_update" && !p.update.status && p.update.content?.length);
    const pending = agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "Run the long operation." }] });
    const prog = await progressed;
    checkEq(prog.update.content[0]?.content?.text, "1/60", "progress is tool call content");
    await agent.notify(acp.methods.agent.session.cancel, { sessionId });
    const res2 = await pending;
    checkEq(res2.stopReason, "cancelled", "prompt 2: cancelled");
    checkEq(statuses("c10"), "pending,in_progress,failed", "the cancelled call is failed");
    check(finalText("c10").includes("notifications/cancelled"), `the cancelled call says so: ${finalText("c10")}`);

    await agent.request(acp.methods.agent.session.close, { sessionId });
  });
} catch (err) {
  failed = true;
  console.error(`FAIL: ${err?.stack ?? err}`, err?.data ? JSON.stringify(err.data) : "");
} finally {
  child.stdin.end();
}
checkEq(await exited, 0, "agent exit status");
if (failed || process.env.SHOW_STDERR) console.error(stderr);
process.exit(summary("acp-mcp") || failed ? 1 : 0);
