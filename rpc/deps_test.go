package rpc

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOnlyRPCImportsJSONRPCLibrary keeps the JSON-RPC library inside this
// package: swapping it must touch only rpc, and nobody else may see its
// pooled request contexts.
func TestOnlyRPCImportsJSONRPCLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		goBin = "go"
	}
	const lib = "go.lsp.dev/jsonrpc2"
	const self = "github.com/coding-agent/coding-agent/rpc"
	cmd := exec.Command(goBin, "list", "-e", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		"github.com/coding-agent/coding-agent/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	sawSelf := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		for _, imp := range fields[1:] {
			if imp != lib && !strings.HasPrefix(imp, lib+"/") {
				continue
			}
			if pkg == self {
				sawSelf = true
				continue
			}
			t.Errorf("package %s imports %s; only %s may", pkg, imp, self)
		}
	}
	if !sawSelf {
		t.Fatalf("go list did not show %s importing %s; the check is not seeing imports:\n%s", self, lib, out)
	}
}

// TestLayering is the fence of the design's one-way dependencies: tools,
// sandbox and editorsync (and their sub-packages, and their tests) never
// depend on rpc or session, directly or through another package; they
// receive small interfaces declared where they are consumed.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goBin); err != nil {
		goBin = "go"
	}
	const mod = "github.com/coding-agent/coding-agent/"
	cmd := exec.Command(goBin, "list", "-e", "-f",
		`{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`,
		"./tools/...", "./sandbox/...", "./editorsync/...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	low := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		low++
		for _, dep := range fields[1:] {
			for _, high := range []string{mod + "rpc", mod + "session"} {
				if dep == high || strings.HasPrefix(dep, high+"/") {
					t.Errorf("%s depends on %s: tools, sandbox and editorsync must not import rpc or session", fields[0], dep)
				}
			}
		}
	}
	if low < 3 {
		t.Fatalf("go list found %d packages under tools, sandbox and editorsync; the check is not seeing them:\n%s", low, out)
	}
}
