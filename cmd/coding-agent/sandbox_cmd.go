package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/coding-agent/coding-agent/sandbox"
)

// runSandboxCmd implements `coding-agent sandbox probe [--json]`: it probes
// the OS sandbox and prints the result. Exit status: 0 when the sandbox is
// available (a degraded one too, with a warning on stderr), 1 when it is
// not, 2 on a usage error.
func runSandboxCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	const usage = "usage: coding-agent sandbox probe [--json]"
	if len(args) == 0 || args[0] != "probe" {
		if len(args) == 0 {
			fmt.Fprintf(stderr, "coding-agent: missing sandbox command\n%s\n", usage)
		} else {
			fmt.Fprintf(stderr, "coding-agent: unknown sandbox command %q\n%s\n", args[0], usage)
		}
		return exitUsage
	}
	fs := flag.NewFlagSet("sandbox probe", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "print the result as JSON")
	if err := fs.Parse(args[1:]); err != nil {
		fmt.Fprintf(stderr, "coding-agent: %v\n%s\n", err, usage)
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "coding-agent: unexpected argument %q\n%s\n", fs.Arg(0), usage)
		return exitUsage
	}
	st := sandbox.New(sandbox.Options{}).Probe(ctx)
	if *asJSON {
		b, _ := json.Marshal(st)
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printStatus(stdout, st)
	}
	switch {
	case !st.Available:
		fmt.Fprintf(stderr, "coding-agent: the OS sandbox is unavailable: %s\n"+
			"Sandboxed commands (presets read-only and workspace-write) will fail; they never run unsandboxed.\n", st.Reason)
		return exitError
	case st.Degraded:
		fmt.Fprintf(stderr, "WARNING: the OS sandbox is DEGRADED (%s): %s\n", st.Kind, st.Reason)
	}
	return exitOK
}

func printStatus(w io.Writer, st sandbox.Status) {
	state := "available"
	switch {
	case !st.Available:
		state = "UNAVAILABLE"
	case st.Degraded:
		state = "available, DEGRADED"
	}
	fmt.Fprintf(w, "sandbox:      %s\n", state)
	fmt.Fprintf(w, "kind:         %s\n", st.Kind)
	if st.Namespaces != "" {
		fmt.Fprintf(w, "namespaces:   %s\n", st.Namespaces)
	}
	if st.LandlockABI > 0 {
		fmt.Fprintf(w, "landlock:     ABI %d\n", st.LandlockABI)
	} else if st.Kind != sandbox.KindSeatbelt {
		fmt.Fprintf(w, "landlock:     unavailable\n")
	}
	fmt.Fprintf(w, "seccomp:      %v\n", st.Seccomp)
	if len(st.Missing) > 0 {
		fmt.Fprintf(w, "missing:      %s\n", strings.Join(st.Missing, ", "))
	}
	if st.Reason != "" {
		fmt.Fprintf(w, "reason:       %s\n", st.Reason)
	}
	fmt.Fprintf(w, "probe took:   %v\n", st.Took.Round(10_000))
}
