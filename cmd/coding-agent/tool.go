package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/tools"
)

// runTool implements `coding-agent tool NAME --json ARGS [--cwd DIR]
// [--preset P] [--data-dir DIR]`: one standalone tool call, its result
// printed as one JSON document on stdout.
func runTool(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tool", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonArgs := fs.String("json", "", "the tool's arguments as a JSON object")
	cwd := fs.String("cwd", "", "working directory (default: the current directory)")
	preset := fs.String("preset", "read-only", "permission preset: read-only, workspace-write or full-access")
	dataDir := fs.String("data-dir", "", "data directory")
	logLevel := fs.String("log-level", "warn", "log level for stderr")

	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprint(stdout, toolUsage)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	name := args[0]
	if err := fs.Parse(args[1:]); err != nil {
		return exitCode(usagef("tool %s: %v", name, err), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("tool %s: unexpected argument %q", name, fs.Arg(0)), stderr)
	}
	if _, err := tools.Select([]string{name}); err != nil {
		return exitCode(usagef("%v", err), stderr)
	}
	if *jsonArgs == "" {
		return exitCode(usagef("tool %s: --json ARGS is required: the arguments as a JSON object, e.g. %s", name, toolExample(name)), stderr)
	}
	if !json.Valid([]byte(*jsonArgs)) {
		return exitCode(usagef("tool %s: --json is not valid JSON", name), stderr)
	}
	env, err := newEnv(stderr, cwd, *logLevel, *dataDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	res, err := env.RunTool(ctx, session.ToolRequest{
		Name: name, Arguments: json.RawMessage(*jsonArgs), Cwd: *cwd, Preset: *preset,
	})
	var pe *session.ParamError
	if errors.As(err, &pe) {
		return exitCode(usagef("tool %s: %v", name, err), stderr)
	}
	if err != nil {
		return exitCode(err, stderr)
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return exitCode(err, stderr)
	}
	if res.IsError {
		return exitError
	}
	return exitOK
}

const toolUsage = `Usage: coding-agent tool NAME --json ARGS [--cwd DIR] [--preset P] [--data-dir DIR]

Runs one built-in tool standalone (no session, no approvals) and prints its
result {content, isError, details} as one JSON document on stdout.
NAME is read, bash, edit or write. The preset defaults to read-only.
Exit status: 0, or 1 when the result is an error, 2 on a usage error.

Examples:
  coding-agent tool read --json '{"path":"go.mod"}'
  coding-agent tool bash --preset full-access --json '{"command":"ls"}'
`

// newEnv sets up what the one-shot commands share: the working directory
// (the current one when *cwd is empty), the logger and the data directory.
func newEnv(stderr io.Writer, cwd *string, logLevel, dataDir string) (*session.Env, error) {
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		*cwd = wd
	}
	logger, err := newLogger(stderr, logLevel)
	if err != nil {
		return nil, err
	}
	dir, err := session.ResolveDataDir(dataDir)
	if err != nil {
		return nil, err
	}
	return &session.Env{Version: version, DataDir: dir, Logger: logger}, nil
}

// toolExample is an example of --json for a tool, for a usage error.
func toolExample(name string) string {
	switch name {
	case "read":
		return `--json '{"path":"go.mod"}'`
	case "bash":
		return `--json '{"command":"ls"}'`
	case "edit":
		return `--json '{"path":"a.txt","edits":[{"oldText":"x","newText":"y"}]}'`
	case "write":
		return `--json '{"path":"a.txt","content":"hello\n"}'`
	}
	return `--json '{}'`
}
