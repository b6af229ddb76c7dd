// One turn through acp-factory (npm, unmodified) against coding-agent.
// Usage: node turn.mjs CONFIG_JSON
// CONFIG_JSON: {"command": "...", "args": [...], "env": {...}, "cwd": "...",
//               "permissionMode": "auto-approve"|"auto-deny"|"interactive",
//               "answer": "allow_once"|"reject_once" (interactive: the option kind chosen),
//               "prompts": ["..."]}
// Prints one JSON object on stdout: {updates: [[...], ...], stopReasons, fsWrites, fsReads}.
import fs from "node:fs/promises";
import { AgentFactory } from "acp-factory";

const cfg = JSON.parse(process.argv[2]);
AgentFactory.register("coding-agent", { command: cfg.command, args: cfg.args, env: cfg.env });

const fsWrites = [];
const fsReads = [];
const agent = await AgentFactory.spawn("coding-agent", {
  permissionMode: cfg.permissionMode,
  // acp-factory advertises fs.readTextFile/writeTextFile; these do what its
  // defaults do, and record that they were asked.
  onFileRead: async (path) => { fsReads.push(path); return await fs.readFile(path, "utf-8"); },
  onFileWrite: async (path, content) => { fsWrites.push(path); await fs.writeFile(path, content, "utf-8"); },
});
const out = { capabilities: agent.capabilities, updates: [], fsWrites, fsReads };
try {
  const session = await agent.createSession(cfg.cwd);
  out.sessionId = session.id;
  for (const text of cfg.prompts) {
    const turn = [];
    for await (const update of session.prompt(text)) {
      turn.push(update);
      if (update.sessionUpdate === "permission_request") {
        const opt = update.options.find((o) => o.kind === cfg.answer);
        if (opt) session.respondToPermission(update.requestId, opt.optionId);
        else session.cancelPermission(update.requestId);
      }
    }
    out.updates.push(turn);
  }
} finally {
  await agent.close();
}
process.stdout.write(JSON.stringify(out) + "\n");
