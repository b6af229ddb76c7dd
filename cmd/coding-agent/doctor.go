package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
)

// runDoctor implements `coding-agent doctor`: what a user needs to know
// before an editor starts the agent. It prints one line per check, "ok",
// "warn" or "FAIL", and exits 1 when a check failed. Credentials are named,
// never shown.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "data directory")
	model := fs.String("model", "", "provider/model")
	if err := fs.Parse(args); err != nil {
		return exitCode(usagef("doctor: %v", err), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("doctor: unexpected argument %q", fs.Arg(0)), stderr)
	}
	failed := false
	report := func(level, what, detail string) {
		if level == "FAIL" {
			failed = true
		}
		fmt.Fprintf(stdout, "%-4s  %-12s %s\n", level, what, detail)
	}
	fmt.Fprintf(stdout, "coding-agent %s (%s/%s)\n", version, runtime.GOOS, runtime.GOARCH)

	// The sandbox.
	st := sandbox.New(sandbox.Options{}).Probe(ctx)
	switch {
	case !st.Available:
		report("FAIL", "sandbox", "none: "+st.Reason+" (bash refuses to run under read-only and workspace-write; full-access runs it unsandboxed)")
	case st.Degraded:
		report("warn", "sandbox", st.Kind+", degraded: "+st.Reason)
	default:
		report("ok", "sandbox", st.Kind)
	}

	// The data directory.
	dir, err := session.ResolveDataDir(*dataDir)
	if err != nil {
		report("FAIL", "data dir", err.Error())
	} else if err := checkWritable(dir); err != nil {
		report("FAIL", "data dir", fmt.Sprintf("%s is not writable: %v (sessions would not be kept)", dir, err))
	} else {
		report("ok", "data dir", dir+" (writable)")
	}
	env := &session.Env{Version: version, DataDir: dir, Model: *model}
	if err := env.CheckConfig(); err != nil {
		report("FAIL", "config", err.Error())
	}

	// Credentials: names only.
	var names []string
	for _, k := range []string{models.EnvAnthropicAPIKey, models.EnvAnthropicBase, models.EnvOpenAIAPIKey, models.EnvOpenAIBase, models.EnvModel} {
		if os.Getenv(k) != "" {
			names = append(names, k+" (environment)")
		}
	}
	if creds, err := env.LoadCredentials(); err != nil {
		report("FAIL", "credentials", err.Error())
	} else {
		for _, k := range creds.Names() {
			if os.Getenv(k) == "" {
				names = append(names, k+" (coding-agent login)")
			}
		}
	}
	if len(names) == 0 {
		report("FAIL", "credentials", "none found")
	} else {
		report("ok", "credentials", strings.Join(names, ", "))
	}
	if env.ModelError() != nil {
		report("FAIL", "model", env.NoModel().Error())
	} else {
		report("ok", "model", env.DefaultModelName())
	}

	// inotify: editor sync watches every directory of the session roots.
	if runtime.GOOS == "linux" {
		watches, werr := readProcInt("/proc/sys/fs/inotify/max_user_watches")
		instances, ierr := readProcInt("/proc/sys/fs/inotify/max_user_instances")
		switch {
		case werr != nil || ierr != nil:
			report("warn", "inotify", fmt.Sprintf("limits unreadable: %v %v", werr, ierr))
		case watches < 65536 || instances < 128:
			report("warn", "inotify", fmt.Sprintf("max_user_watches %d, max_user_instances %d: low for large repositories (raise fs.inotify.max_user_watches with sysctl)", watches, instances))
		default:
			report("ok", "inotify", fmt.Sprintf("max_user_watches %d, max_user_instances %d", watches, instances))
		}
	}

	// MCP servers of config.json.
	wd, _ := os.Getwd()
	check, err := env.CheckMCPServers(ctx, wd)
	switch {
	case err != nil:
		report("FAIL", "mcp", err.Error())
	case len(check.Started) == 0 && len(check.Failures) == 0:
		report("ok", "mcp", "no MCP servers in "+filepath.Join(dir, "config.json"))
	default:
		var started []string
		for name, n := range check.Started {
			started = append(started, fmt.Sprintf("%s (%d tools)", name, n))
		}
		sort.Strings(started)
		if len(started) > 0 {
			report("ok", "mcp", "started: "+strings.Join(started, ", "))
		}
		for _, f := range check.Failures {
			report("FAIL", "mcp", f.Error())
		}
	}
	env.Shutdown()
	if failed {
		return exitError
	}
	return exitOK
}

// checkWritable creates dir if needed and a file in it, then removes the file.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return err
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}

func readProcInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
