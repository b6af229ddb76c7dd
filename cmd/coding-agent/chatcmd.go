package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/coding-agent/coding-agent/cmd/coding-agent/chat"
	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/tools"
)

// runChat implements `coding-agent chat`: the interactive terminal mode.
func runChat(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	toolList := fs.String("tools", strings.Join(tools.Builtins(), ","), "comma-separated built-in tools; empty for none")
	model := fs.String("model", "", "provider/model")
	preset := fs.String("preset", "read-only", "read-only, workspace-write or full-access")
	cwd := fs.String("cwd", "", "working directory")
	dataDir := fs.String("data-dir", "", "data directory")
	logLevel := fs.String("log-level", "info", "log level for the log file")
	cont := fs.Bool("continue", false, "resume the newest session of the working directory")
	resume := fs.String("resume", "", "resume the session with this id")
	if err := fs.Parse(args); err != nil {
		return exitCode(usagef("%v", err), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("unexpected argument %q (chat reads prompts from the terminal; for one prompt use --print)", fs.Arg(0)), stderr)
	}
	if *cont && *resume != "" {
		return exitCode(usagef("--continue and --resume: choose one"), stderr)
	}
	in, inOK := stdin.(*os.File)
	out, outOK := stdout.(*os.File)
	if !inOK || !outOK || !isTerminal(in) || !isTerminal(out) {
		return exitCode(usagef("chat needs a terminal on stdin and stdout; for scripts use 'coding-agent --print PROMPT', for editors 'coding-agent serve'"), stderr)
	}
	names, err := toolNames(*toolList)
	if err != nil {
		return exitCode(err, stderr)
	}
	p, err := tools.ParsePreset(*preset)
	if err != nil {
		return exitCode(usagef("--preset: %v", err), stderr)
	}
	if *cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return exitCode(err, stderr)
		}
		*cwd = wd
	}
	if abs, err := filepath.Abs(*cwd); err == nil {
		*cwd = abs
	}
	dir, err := session.ResolveDataDir(*dataDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	// The screen is the chat's: logs go to a file in the data directory.
	logger, closeLog, err := chatLogger(dir, *logLevel)
	if err != nil {
		return exitCode(err, stderr)
	}
	defer closeLog()
	env := &session.Env{Version: version, DataDir: dir, Logger: logger, Model: *model}
	defer env.Shutdown()
	histFile := ""
	if dir != "" {
		histFile = filepath.Join(dir, "chat-history.jsonl")
	}
	termName := os.Getenv("TERM")
	_, noColor := os.LookupEnv("NO_COLOR")
	err = chat.Run(ctx, chat.Config{
		Env:         env,
		Options:     session.Options{Cwd: *cwd, Tools: names, Preset: p},
		Continue:    *cont,
		Resume:      *resume,
		In:          in,
		Out:         out,
		Color:       !noColor && termName != "dumb",
		Dumb:        termName == "dumb",
		HistoryFile: histFile,
	})
	var pe *session.ParamError
	switch {
	case errors.As(err, &pe):
		return exitCode(usagef("%v", err), stderr)
	case err != nil:
		return exitCode(err, stderr)
	}
	return exitOK
}

// toolNames parses --tools.
func toolNames(list string) ([]string, error) {
	names := []string{}
	if list != "" {
		names = strings.Split(list, ",")
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
	}
	if _, err := tools.Select(names); err != nil {
		return nil, usagef("--tools: %v", err)
	}
	return names, nil
}

// chatLogger logs to chat.log in the data directory (stderr is the
// chat's screen), or nowhere when there is no data directory.
func chatLogger(dir, level string) (*slog.Logger, func(), error) {
	l, err := newLogger(io.Discard, level)
	if err != nil {
		return nil, nil, err
	}
	if dir == "" {
		return l, func() {}, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return l, func() {}, nil
	}
	f, err := os.OpenFile(filepath.Join(dir, "chat.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return l, func() {}, nil
	}
	l, _ = newLogger(f, level)
	return l, func() { f.Close() }, nil
}

// wantsChat reports whether a bare `coding-agent` was started by a person
// at a terminal (stdin and stdout both terminals): it gets the chat. A pipe
// (an editor, a script) always gets the ACP server.
func wantsChat(args []string, stdin io.Reader, stdout io.Writer) bool {
	if len(args) != 0 {
		return false
	}
	in, ok1 := stdin.(*os.File)
	out, ok2 := stdout.(*os.File)
	return ok1 && ok2 && isTerminal(in) && isTerminal(out)
}
