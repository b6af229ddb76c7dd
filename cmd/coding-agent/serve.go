package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// runServe serves ACP on stdin/stdout until stdin ends or ctx is cancelled
// (SIGINT, SIGTERM).
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	framing := fs.String("framing", "auto", "auto, ndjson or header")
	maxBytes := fs.Int64("max-message-bytes", 64<<20, "largest accepted message in bytes")
	logLevel := fs.String("log-level", "", "debug, info, warn or error")
	trace := fs.String("trace", "", "file to append a wire trace to")
	dataDir := fs.String("data-dir", "", "data directory")
	model := fs.String("model", "", "default model as provider/model")
	preset := fs.String("preset", "", "permission preset of sessions whose client asks for none: read-only, workspace-write or full-access")
	approvalTimeout := fs.Duration("approval-timeout", 0, "how long a permission request waits for the client's answer (e.g. 2m); 0 means config.json, else 10m")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *model != "" {
		if err := models.CheckSpec(*model); err != nil {
			return usagef("--model: %v", err)
		}
	}
	p, err := tools.ParsePreset(*preset)
	if err != nil {
		return usagef("--preset: %v", err)
	}
	if *approvalTimeout < 0 {
		return usagef("--approval-timeout: must not be negative, got %s", *approvalTimeout)
	}
	fr, err := rpc.ParseFraming(*framing)
	if err != nil {
		return usagef("--framing: %v", err)
	}
	if *maxBytes <= 0 {
		return usagef("--max-message-bytes: must be positive, got %d", *maxBytes)
	}
	logger, err := newLogger(stderr, *logLevel)
	if err != nil {
		return err
	}
	dir, err := session.ResolveDataDir(*dataDir)
	if err != nil {
		return err
	}
	opts := rpc.Options{Framing: fr, MaxMessageBytes: *maxBytes, Logger: logger}
	if *trace != "" {
		f, err := os.OpenFile(*trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--trace: %w", err)
		}
		defer f.Close()
		opts.Trace = f
	}
	if f, ok := stdin.(*os.File); ok && isTerminal(f) {
		// A person, not an editor, started us: say what this is.
		fmt.Fprintln(stderr, "coding-agent: serving ACP (JSON-RPC) on stdin/stdout for an editor or a script; Ctrl-D ends it. See 'coding-agent --help' for the commands a person runs.")
	}
	env := &session.Env{Version: version, DataDir: dir, Logger: logger, Model: *model, ApprovalTimeout: *approvalTimeout}
	if *preset != "" {
		env.Preset = p
	}
	if err := env.Start(ctx); err != nil {
		return err
	}
	defer env.Shutdown()
	var agent *session.Agent
	err = rpc.Serve(ctx, stdin, stdout, func(c rpc.Client) rpc.Agent {
		agent = session.NewAgent(env, c)
		return agent
	}, opts)
	if agent != nil {
		agent.Close()
	}
	if ctx.Err() != nil {
		// SIGINT or SIGTERM: a requested shutdown, not a failure.
		logger.Info("shutting down", "cause", context.Cause(ctx))
		return nil
	}
	return err
}

// newLogger returns a text logger on stderr at the level given by the flag,
// else $CODING_AGENT_LOG, else info.
func newLogger(stderr io.Writer, level string) (*slog.Logger, error) {
	if level == "" {
		level = os.Getenv("CODING_AGENT_LOG")
	}
	var l slog.Level
	switch strings.ToLower(level) {
	case "", "info":
		l = slog.LevelInfo
	case "debug":
		l = slog.LevelDebug
	case "warn", "warning":
		l = slog.LevelWarn
	case "error":
		l = slog.LevelError
	default:
		return nil, usagef("--log-level: unknown level %q (debug, info, warn, error)", level)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: l})), nil
}
