package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/coding-agent/coding-agent/cmd/coding-agent/web"
	"github.com/coding-agent/coding-agent/tools"
)

// runWeb implements `coding-agent web`: the browser UI on a local HTTP
// server. The page's URL, token included, is the one line on stdout.
func runWeb(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on (HOST:PORT; port 0 picks a free one)")
	allowRemote := fs.Bool("allow-remote", false, "allow an --addr that is not loopback")
	cwd := fs.String("cwd", "", "directory for new sessions")
	preset := fs.String("preset", "", "preset for new sessions")
	model := fs.String("model", "", "default model as provider/model")
	open := fs.Bool("open", false, "open the page in the browser")
	dataDir := fs.String("data-dir", "", "data directory")
	logLevel := fs.String("log-level", "", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if *preset != "" {
		if _, err := tools.ParsePreset(*preset); err != nil {
			return usagef("--preset: %v", err)
		}
	}
	if err := web.CheckAddr(*addr, *allowRemote); err != nil {
		return usagef("%v", err)
	}
	env, err := newEnv(stderr, cwd, *logLevel, *dataDir)
	if err != nil {
		return err
	}
	if abs, err := filepath.Abs(*cwd); err == nil {
		*cwd = abs
	}
	env.Model = *model
	if err := env.Start(ctx); err != nil {
		return err
	}
	defer env.Shutdown()
	srv, err := web.New(*addr, *allowRemote, web.Options{Env: env, Logger: env.Logger, Cwd: *cwd, Preset: *preset})
	if err != nil {
		return usagef("%v", err)
	}
	if *allowRemote {
		fmt.Fprintf(stderr, "coding-agent: WARNING: serving on %s, which may be reachable from other machines; anyone with the URL can run commands as you, and the traffic is not encrypted\n", srv.Addr())
	}
	fmt.Fprintln(stdout, srv.URL())
	if *open {
		if err := openBrowser(srv.URL()); err != nil {
			fmt.Fprintf(stderr, "coding-agent: could not open a browser (%v); open the URL above\n", err)
		}
	}
	return srv.Serve(ctx)
}

// openBrowser opens url in the user's browser.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() // reaps it; xdg-open returns at once
	return nil
}
