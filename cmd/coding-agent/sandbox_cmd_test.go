package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/sandbox"
)

func TestSandboxProbeCmd(t *testing.T) {
	ctx := context.Background()
	var out, errb bytes.Buffer
	code := runSandboxCmd(ctx, []string{"probe", "--json"}, &out, &errb)
	var st sandbox.Status
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("--json output %q: %v", out.String(), err)
	}
	want := 0
	if !st.Available {
		want = 1
	}
	if code != want {
		t.Errorf("exit %d, want %d (status %+v)", code, want, st)
	}
	if st.Degraded && !strings.Contains(errb.String(), "DEGRADED") {
		t.Errorf("a degraded sandbox must be announced on stderr: %q", errb.String())
	}
	if !st.Degraded && st.Available && errb.Len() != 0 {
		t.Errorf("stderr: %q", errb.String())
	}
	if !strings.Contains(out.String(), `"available":`) || !strings.Contains(out.String(), `"kind":"`) {
		t.Errorf("json: %s", out.String())
	}

	out.Reset()
	errb.Reset()
	code = runSandboxCmd(ctx, []string{"probe"}, &out, &errb)
	if code != want || !strings.Contains(out.String(), "kind:         "+st.Kind) {
		t.Errorf("human output (exit %d):\n%s", code, out.String())
	}
}

func TestSandboxCmdUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"prob"}, {"probe", "--yaml"}, {"probe", "extra"}} {
		var out, errb bytes.Buffer
		if code := runSandboxCmd(context.Background(), args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
		if !strings.Contains(errb.String(), "usage: coding-agent sandbox probe") || out.Len() != 0 {
			t.Errorf("%q: stdout %q stderr %q", args, out.String(), errb.String())
		}
	}
}
