package chat

import (
	"regexp"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/tools"
)

func TestMarkdownPlain(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello **world**\n", "hello world\n"},
		{"- one\n* two\n", "• one\n• two\n"},
		{"# Title\ntext\n", "Title\ntext\n"},
		{"```go\nx := 1\n```\nafter\n", "─── go\nx := 1\n───\nafter\n"},
		{"a `code` b\n", "a code b\n"},
		{"2 * 3 = 6\n", "2 * 3 = 6\n"},
		{"-1 degrees\n", "-1 degrees\n"},
		{"no newline at the end", "no newline at the end"},
		{"**bold at the end", "bold at the end"},
	} {
		// Whole, and streamed one rune at a time: the same output.
		for _, split := range []bool{false, true} {
			var m mdState
			var got strings.Builder
			if split {
				for _, r := range tc.in {
					got.WriteString(m.feed(string(r), style{}))
				}
			} else {
				got.WriteString(m.feed(tc.in, style{}))
			}
			got.WriteString(m.flush(style{}))
			if got.String() != tc.want {
				t.Errorf("feed(%q, split %v) = %q, want %q", tc.in, split, got.String(), tc.want)
			}
		}
	}
}

func TestMarkdownColourIsClosed(t *testing.T) {
	var m mdState
	out := m.feed("a **b `c\n```\ncode\n```\n", style{color: true}) + m.flush(style{color: true})
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if strings.Contains(l, "\x1b[") && !strings.HasSuffix(l, "\x1b[0m") {
			t.Errorf("a style runs past the end of line %q", l)
		}
	}
}

func TestBatchHeading(t *testing.T) {
	for _, tc := range []struct {
		verbs []string
		want  string
	}{
		{[]string{"ran", "ran", "read"}, "Ran 2 commands, read 1 file"},
		{[]string{"read", "ran", "read", "wrote", "edited", "called", "called"}, "Read 2 files, ran 1 command, wrote 1 file, edited 1 file, called 2 tools"},
		{nil, ""},
	} {
		var b batch
		for _, v := range tc.verbs {
			b.add(v)
		}
		if got := b.heading(); got != tc.want {
			t.Errorf("heading(%v) = %q, want %q", tc.verbs, got, tc.want)
		}
	}
	for _, tc := range []struct {
		c    call
		want string
	}{
		{call{tool: "bash", kind: tools.KindExecute}, "ran"},
		{call{tool: "read", kind: tools.KindRead}, "read"},
		{call{tool: "write", kind: tools.KindEdit}, "wrote"},
		{call{tool: "edit", kind: tools.KindEdit}, "edited"},
		{call{tool: "mcp_x", kind: tools.KindOther}, "called"},
	} {
		if got := verbOf(&tc.c); got != tc.want {
			t.Errorf("verbOf(%v) = %q, want %q", tc.c, got, tc.want)
		}
	}
}

// TestRendererNeutralizes: escape sequences and carriage returns in model
// text, titles, output tails and diffs never reach the terminal; with
// colour off the output has no ESC at all, and without cursor movement
// (TERM=dumb) no cursor sequences either.
func TestRendererNeutralizes(t *testing.T) {
	evil := "x\x1b[2J\x1b]0;title\x07\r\u202e\u009b"
	old := "a\n"
	events := []session.Event{
		&session.ThoughtChunk{Text: evil},
		&session.MessageChunk{Text: evil + "\n**" + evil + "**\n"},
		&session.ToolCallStarted{CallID: "c", Tool: "bash", Title: "Bash · " + evil, Kind: tools.KindExecute},
		&session.ToolCallUpdated{CallID: "c", Status: session.StatusInProgress, Title: "Bash · " + evil + "\nsecond line"},
		&session.ToolCallUpdated{CallID: "c", Progress: &tools.Progress{Tail: evil + "\n" + evil}},
		&session.ToolCallFinished{CallID: "c", Status: session.StatusFailed, Text: []string{evil}, Diffs: []session.Diff{{Path: "f" + evil, OldText: &old, NewText: evil}}},
	}
	for _, tc := range []struct {
		color, live bool
	}{{false, false}, {false, true}, {true, true}, {true, false}} {
		var w strings.Builder
		r := newRenderer(&w, style{color: tc.color}, tc.live, 80)
		for _, ev := range events {
			r.event(ev)
		}
		r.println(r.approval(&session.ApprovalRequest{Tool: "bash", Request: tools.RequestEscalation, Command: evil, Justification: evil, Reason: evil, Path: evil}, true))
		r.endTurn()
		r.close()
		out := w.String()
		// Only the renderer's own sequences: SGR and clearing the live
		// region.
		own := ownSeq.ReplaceAllString(out, "")
		if strings.ContainsAny(own, "\x1b\r\x07\u202e\u009b") {
			t.Errorf("color %v live %v: a control character besides the renderer's own:\n%q", tc.color, tc.live, own)
		}
		for _, bad := range []string{"\x1b[2J", "\x1b]", "\u202e", "\u009b", "\x07"} {
			if strings.Contains(out, bad) {
				t.Errorf("color %v live %v: %q reached the terminal:\n%q", tc.color, tc.live, bad, out)
			}
		}
		if !tc.color && !tc.live && strings.Contains(out, "\x1b") {
			t.Errorf("no colour, no cursor movement, yet ESC written:\n%q", out)
		}
		if !strings.Contains(out, `\x1b[2J`) {
			t.Errorf("the escape is not shown visibly:\n%q", out)
		}
	}
}

func TestApprovalShowsEverything(t *testing.T) {
	r := newRenderer(&strings.Builder{}, style{}, false, 80)
	diff := "--- a/f\n+++ b/f\n" + strings.Repeat("+line\n", 30)
	req := &session.ApprovalRequest{Tool: "write", Request: tools.RequestFileChange, Path: "/real/target", Diff: diff, Reason: "the preset is read-only", Justification: "to save", Input: []byte(`{"path":"f"}`)}
	short := r.approval(req, false)
	for _, want := range []string{"change a file", "target:  /real/target", "policy:  the preset is read-only", "the model says:", "to save", "more lines (d shows everything)", "[y] allow once", "[a] always", "[n] reject", "[d] details"} {
		if !strings.Contains(short, want) {
			t.Errorf("approval lacks %q:\n%s", want, short)
		}
	}
	full := r.approval(req, true)
	if strings.Count(full, "+line") != 30 || !strings.Contains(full, `"path":"f"`) {
		t.Errorf("d does not show everything:\n%s", full)
	}
	for _, l := range strings.Split(short, "\n") {
		if strings.HasPrefix(l, "+") || strings.HasPrefix(l, "to save") {
			t.Errorf("model text at the left margin: %q", l)
		}
	}
}

var ownSeq = regexp.MustCompile(`\x1b\[[0-9;]*m|\r\x1b\[[0-9]+A\x1b\[J`)
