package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestDescriptorLimitRaised: started with a low soft RLIMIT_NOFILE, the
// agent runs with its soft limit at the hard limit (the Go runtime raises
// it before main, to the hard limit or one below), while the commands it
// starts get the original soft limit back (select(2) users need <= 1024).
func TestDescriptorLimitRaised(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Max < 1024 {
		t.Skipf("hard limit %d: nothing to raise", lim.Max)
	}
	script := `{"command":"ulimit -Sn; awk '/^Max open files/ {print $4, $5}' /proc/$PPID/limits"}`
	cmd := exec.Command("/bin/bash", "-c", `ulimit -Sn 512 && exec "$0" tool bash --preset full-access --json "$1"`, os.Args[0], script)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var res struct {
		Content []struct{ Text string } `json:"content"`
	}
	if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(res.Content[0].Text), "\n")
	if len(lines) < 2 || strings.TrimSpace(lines[0]) != "512" {
		t.Fatalf("the command's soft limit is not the original 512:\n%s", out)
	}
	f := strings.Fields(lines[1])
	soft, _ := strconv.ParseUint(f[0], 10, 64)
	hard, _ := strconv.ParseUint(f[len(f)-1], 10, 64)
	if hard != lim.Max || soft+1 < hard {
		t.Fatalf("agent's limits soft %d hard %d, want soft at the hard limit %d:\n%s", soft, hard, lim.Max, out)
	}
}
