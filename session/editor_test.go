package session

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coding-agent/coding-agent/editorsync"
)

// filesChangedParams is the params of _coding-agent/files_changed.
type filesChangedParams struct {
	SessionID string
	Changes   []struct {
		Path, URI, Kind string
		Origin          *struct{ ToolCallID, Tool string }
		Open            bool
	}
}

// waitChange waits for a files_changed entry for path and returns it with
// every notification seen meanwhile.
func (c *wireClient) waitChange(t *testing.T, path string) (filesChangedParams, []wireMsg) {
	t.Helper()
	var seen []wireMsg
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-c.notes:
			seen = append(seen, m)
			if m.Method != "_coding-agent/files_changed" {
				continue
			}
			var p filesChangedParams
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			for _, ch := range p.Changes {
				if ch.Path == path {
					return p, seen
				}
			}
		case <-deadline:
			t.Fatalf("no files_changed for %s", path)
		}
	}
}

// toolCallID returns the id of the last tool_call among msgs.
func toolCallID(msgs []wireMsg) string {
	id := ""
	for _, m := range msgs {
		var n struct {
			Update struct {
				Kind       string `json:"sessionUpdate"`
				ToolCallID string
			} `json:"update"`
		}
		json.Unmarshal(m.Params, &n)
		if n.Update.Kind == "tool_call" {
			id = n.Update.ToolCallID
		}
	}
	return id
}

func TestEditorSyncBashChangeIsAttributedAndDiffed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "open.txt")
	os.WriteFile(path, []byte("alpha\nbeta\n"), 0o644)
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	sid := newSession(t, c, dir, map[string]any{"preset": "full-access"})
	c.notify("document/didOpen", map[string]any{"sessionId": sid, "uri": editorsync.PathToURI(path), "languageId": "text", "version": 1, "text": "alpha\nbeta\n"})
	var res struct{ IsError bool }
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "bash", "arguments": map[string]any{"command": "sed -i s/beta/gamma/ open.txt"}}, &res); err != nil || res.IsError {
		t.Fatalf("bash: %+v %+v", err, res)
	}
	p, seen := c.waitChange(t, path)
	// The call's answer came after its final update, so that update is in
	// seen or still queued (files_changed may have come first).
	seen = append(seen, c.drain()...)
	id := toolCallID(seen)
	ch := p.Changes[0]
	if ch.Kind != "modified" || ch.Origin == nil || ch.Origin.ToolCallID != id || ch.Origin.Tool != "bash" || !ch.Open {
		t.Errorf("change %+v, want modified by bash call %s, open", ch, id)
	}
	// The bash call's final update carries the diff.
	var diff map[string]any
	for _, m := range seen {
		if strings.Contains(string(m.Params), `"type":"diff"`) {
			var n struct {
				Update struct{ Content []map[string]any } `json:"update"`
			}
			json.Unmarshal(m.Params, &n)
			for _, c := range n.Update.Content {
				if c["type"] == "diff" {
					diff = c
				}
			}
		}
	}
	if diff == nil || diff["oldText"] != "alpha\nbeta\n" || diff["newText"] != "alpha\ngamma\n" || diff["path"] != path {
		t.Errorf("diff on the bash call: %v", diff)
	}
}

func TestEditorSyncExternalAndOwnWrites(t *testing.T) {
	dir := t.TempDir()
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	sid := newSession(t, c, dir, map[string]any{"preset": "workspace-write"})

	ext := filepath.Join(dir, "ext.txt")
	if out, err := exec.Command("sh", "-c", "echo external > "+ext).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	p, _ := c.waitChange(t, ext)
	if ch := p.Changes[0]; ch.Kind != "created" || ch.Origin != nil {
		t.Errorf("external change %+v, want created with origin null", ch)
	}

	own := filepath.Join(dir, "own.txt")
	os.WriteFile(own, []byte("one\n"), 0o644)
	c.waitChange(t, own)
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "edit", "arguments": map[string]any{"path": "own.txt", "edits": []any{map[string]any{"oldText": "one", "newText": "two"}}}}, nil); err != nil {
		t.Fatal(err)
	}
	p, seen := c.waitChange(t, own)
	var entries int
	for _, ch := range p.Changes {
		if ch.Path == own {
			entries++
			if ch.Kind != "modified" || ch.Origin == nil || ch.Origin.Tool != "edit" || ch.Origin.ToolCallID != toolCallID(seen) {
				t.Errorf("own edit reported as %+v", ch)
			}
		}
	}
	if entries != 1 {
		t.Errorf("%d entries for our own atomic edit, want exactly 1", entries)
	}
}

func TestEditorSyncDirtyBufferBlocksEdits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dirty.go")
	os.WriteFile(path, []byte("package x\n"), 0o644)
	c := startAgent(t, &Env{DataDir: t.TempDir()})
	sid := newSession(t, c, dir, map[string]any{"preset": "full-access"})
	uri := editorsync.PathToURI(path)
	c.notify("document/didOpen", map[string]any{"sessionId": sid, "uri": uri, "languageId": "go", "version": 1, "text": "package x\n"})
	// Non-ASCII incremental change: "é" and an emoji are 1 and 2 UTF-16 units.
	c.notify("document/didChange", map[string]any{"sessionId": sid, "uri": uri, "version": 2, "contentChanges": []any{
		map[string]any{"range": map[string]any{"start": map[string]any{"line": 1, "character": 0}, "end": map[string]any{"line": 1, "character": 0}}, "text": "// café 😀 unsaved\n"},
	}})
	for _, test := range []struct{ name, args string }{
		{"edit", `{"path":"dirty.go","edits":[{"oldText":"package x","newText":"package y"}]}`},
		{"write", `{"path":"dirty.go","content":"clobbered\n"}`},
	} {
		var res struct {
			IsError bool
			Content []struct{ Text string }
		}
		if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": test.name, "arguments": json.RawMessage(test.args)}, &res); err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(res.Content[0].Text, "dirty.go") || !strings.Contains(res.Content[0].Text, "unsaved") {
			t.Errorf("%s on a dirty buffer: %+v", test.name, res)
		}
		if b, _ := os.ReadFile(path); string(b) != "package x\n" {
			t.Errorf("%s changed the file under a dirty buffer: %q", test.name, b)
		}
	}
	var read struct{ Content []struct{ Text string } }
	if err := c.call("_coding-agent/tools/call", map[string]any{"sessionId": sid, "name": "read", "arguments": map[string]any{"path": "dirty.go"}}, &read); err != nil {
		t.Fatal(err)
	}
	if all := read.Content[0].Text; !strings.Contains(all, "unsaved") {
		t.Errorf("read does not say the editor holds unsaved changes: %q", all)
	}
}
