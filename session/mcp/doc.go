// Package mcp connects a session to the user's MCP (Model Context Protocol)
// servers and offers their tools beside the built-in ones.
//
// A [Set] is the servers of one session: [Start] starts them all in
// parallel, each bounded by [Options.StartTimeout] (initialize plus the
// tool list). A server that fails or hangs does not fail the set: it is
// reported in [Set.Failures], naming the server and its error, and the
// other servers' tools work. [Set.Tools] returns the tools as values, each
// named mcp__<server>__<tool> within the providers' name rules, with its
// description and input schema; [Tool.Validate] checks arguments against
// that schema with a full JSON Schema validator (google/jsonschema-go), and
// [Tool.Call] dispatches a call and turns the result into content blocks, a
// bounded text for the model and the structured output.
//
// Servers come from ACP's mcpServers ([ParseACP]: stdio, http and sse) and
// from the "mcpServers" object of config.json ([ParseConfig], the common
// .mcp.json shape); [Merge] lets the session's list win on a name clash.
//
// Stdio servers run as the user, unsandboxed, with exactly the environment
// the client gave set on top of the agent's own, each in a process group of its own under a
// small supervisor (this binary re-executed; see [MaybeRunSupervisor]) that
// kills the group — SIGTERM, a grace, SIGKILL — when the set closes, and
// also when the agent dies without closing it (it watches a pipe only the
// agent holds). On Linux the supervisor is a child subreaper, so
// descendants that leave the group die too. Their stderr goes to the log,
// line by line, with the server's name.
//
// Only tools are supported: MCP prompts, resources (other than resource
// content in tool results), sampling, elicitation and roots are not.
package mcp
