// Command coding-agent is a coding-agent backend that editors, notebooks and
// scripts start as an ACP (Agent Client Protocol) JSON-RPC server on stdio.
//
// Usage:
//
//	coding-agent [serve] [flags]          serve ACP on stdin/stdout (the default)
//	coding-agent chat [flags]             the interactive terminal mode
//	coding-agent --print PROMPT [flags]   one prompt turn; the answer on stdout
//	coding-agent web [flags]              the browser UI on a local HTTP server
//	coding-agent tool NAME --json ARGS    run one built-in tool and print its result
//	coding-agent sandbox probe [--json]   report what the OS sandbox can do here
//	coding-agent login | logout           store or remove model credentials
//	coding-agent --version | --help
//
// main only parses flags, wires the packages together and turns errors into
// exit codes: 0 done, 1 error (or a tool result with isError), 2 usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session/mcp"
)

// version is the program's version: release builds stamp it from the tag
// with -ldflags "-X main.ldflagsVersion=1.2.3" (scripts/release.sh); otherwise
// stampedVersion takes it from the build info (`go install ...@v1.2.3`)
// or the VCS revision.
var version = stampedVersion(ldflagsVersion)

// ldflagsVersion is set by release builds.
var ldflagsVersion = ""

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

func main() {
	// The sandbox re-executes this binary as its namespace helper; that
	// process must not get any further than this.
	sandbox.MaybeRunHelper()
	// Stdio MCP servers run under this binary re-executed as their
	// supervisor, which kills them when the agent dies.
	mcp.MaybeRunSupervisor()

	// A client that closes our stdout must not kill us with SIGPIPE before
	// we have stopped our children: the write error ends the connection.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// usageError is an error in the command line: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// run dispatches the sub-command and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	sub := ""
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		sub, args = args[0], args[1:]
	}
	var err error
	switch sub {
	case "", "serve":
		if sub == "" && hasPrint(args) {
			return runPrint(ctx, args, stdin, stdout, stderr)
		}
		if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
			fmt.Fprintf(stdout, "coding-agent %s\n", version)
			return exitOK
		}
		if len(args) == 1 && isHelp(args[0]) {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		if sub == "" && wantsChat(args, stdin, stdout) {
			return runChat(ctx, args, stdin, stdout, stderr)
		}
		err = runServe(ctx, args, stdin, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "coding-agent %s\n", version)
		return exitOK
	case "help":
		fmt.Fprint(stdout, usageText)
		return exitOK
	case "chat":
		return runChat(ctx, args, stdin, stdout, stderr)
	case "tool":
		return runTool(ctx, args, stdout, stderr)
	case "web":
		if len(args) == 1 && isHelp(args[0]) {
			fmt.Fprint(stdout, usageText)
			return exitOK
		}
		err = runWeb(ctx, args, stdout, stderr)
	case "sandbox":
		return runSandboxCmd(ctx, args, stdout, stderr)
	case "login":
		return runLogin(ctx, args, stdin, stdout, stderr)
	case "logout":
		return runLogout(args, stderr)
	case "doctor":
		return runDoctor(ctx, args, stdout, stderr)
	default:
		err = usagef("unknown command %q (commands: chat, serve, web, tool, sandbox, login, logout, doctor, version, help)", sub)
	}
	return exitCode(err, stderr)
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

// exitCode reports err on stderr and maps it to an exit status.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "coding-agent: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintln(stderr, "Run 'coding-agent --help' for usage.")
		return exitUsage
	}
	return exitError
}

const usageText = `coding-agent: a coding-agent backend speaking ACP (Agent Client Protocol) v1 on stdio.

Usage:
  coding-agent [serve] [flags]            Serve ACP JSON-RPC on stdin/stdout (default).
  coding-agent chat [--cwd DIR]           The interactive terminal mode (also a bare
        [--model P/M] [--preset P]        'coding-agent' on a terminal). Enter sends,
        [--tools LIST] [--data-dir DIR]   Alt-Enter or a trailing \ starts a new line,
        [--continue | --resume ID]        Ctrl-C cancels the turn, Ctrl-D exits, /help.
                                          --continue resumes this directory's newest session.
  coding-agent --print PROMPT             Run one prompt turn: the final answer on stdout,
        [--tools read,bash,edit,write]    tool activity on stderr. --tools "" gives no tools.
        [--model P/M] [--preset P]        Approvals are asked on the terminal (y/N), else
        [--cwd DIR] [--data-dir DIR]      denied. Exit 0, 1 error, 2 usage, 130 cancelled.
        [--continue | --resume ID]        Continue this directory's newest session, or one.
  coding-agent web [--addr 127.0.0.1:PORT] The browser UI: prints the page's URL (with its
        [--cwd DIR] [--preset P]          access token) and serves it until Ctrl-C. Loopback
        [--model P/M] [--open]            only unless --allow-remote. --open opens a browser.
        [--data-dir DIR]
  coding-agent tool NAME --json ARGS      Run one built-in tool (read, bash, edit, write)
        [--cwd DIR] [--preset P]          standalone and print its result as JSON.
        [--data-dir DIR]                  Exit 0, or 1 when the result is an error.
  coding-agent sandbox probe [--json]     Report what the OS sandbox can do here.
  coding-agent login [--provider P]       Store a model provider's key (anthropic, openai) or a
        [--base-url URL] [--model P/M]    local server's URL (local) in the data directory,
                                          mode 0600; the key is read from the terminal or stdin.
  coding-agent logout                     Remove the stored credentials.
  coding-agent doctor [--data-dir DIR]    Check the sandbox, credentials (names only), the data
                                          directory, inotify limits and MCP servers; exit 1 on
                                          a problem.
  coding-agent --version                  Print the version.

Serve flags:
  --framing auto|ndjson|header   Message framing (default auto: detected from the first byte).
  --max-message-bytes N          Largest accepted message (default 67108864).
  --log-level debug|info|warn|error  Log level for stderr (env CODING_AGENT_LOG; default info).
  --trace FILE                   Append a trace of every protocol message to FILE.
  --model PROVIDER/MODEL         Default model (env CODING_AGENT_MODEL), e.g.
                                 anthropic/claude-sonnet-4-5 or openai/gpt-4.1; keys from
                                 ANTHROPIC_API_KEY, OPENAI_API_KEY (+ OPENAI_BASE_URL).
  --preset P                     Preset of sessions whose client picks none (default
                                 "preset" in config.json, else read-only).
  --approval-timeout D           How long an approval waits for the client (e.g. 2m; default
                                 "approvalTimeoutSeconds" in config.json, else 10m).
  --data-dir DIR                 Data directory (env CODING_AGENT_DATA_DIR; default
                                 $XDG_DATA_HOME/coding-agent or ~/.local/share/coding-agent).

Presets: read-only (default), workspace-write, full-access.
stdout carries protocol messages only; logs go to stderr.
`
