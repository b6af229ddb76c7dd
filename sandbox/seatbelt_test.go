package sandbox

import (
	"slices"
	"strings"
	"testing"
)

func TestSeatbeltProfile(t *testing.T) {
	pl := &plan{
		preset:    WorkspaceWrite,
		roots:     []string{"/Users/u/ws", "/Users/u/extra.d"},
		protected: []string{"/Users/u/ws/.git", "/Users/u/ws/sub/.git", "/Users/u/data"},
		missing:   []string{"/Users/u/ws/.agent"},
		pins:      []string{"/Users/u/ws/sub"},
	}
	prof, params, err := seatbeltProfile(pl, "/private/var/folders/x/T/ca-1")
	if err != nil {
		t.Fatal(err)
	}
	wantLines := []string{
		"(version 1)",
		"(deny network*)",
		"(deny file-write*)",
		`(allow file-write* (subpath (param "TMP")))`,
		`(allow file-write* (subpath (param "ROOT0")))`,
		`(allow file-write* (subpath (param "ROOT1")))`,
		`(deny file-write* (regex #"^/Users/u/ws/(.*/)?\.git(/.*)?$")) ; root 0`,
		`(deny file-write* (regex #"^/Users/u/extra\.d/(.*/)?\.git(/.*)?$")) ; root 1`,
		`(deny file-write* (literal (param "P0")) (subpath (param "P0")))`,
		`(deny file-write* (literal (param "P3")) (subpath (param "P3")))`,
		`(deny file-write* (literal (param "D0")))`,
	}
	lines := strings.Split(prof, "\n")
	for _, w := range wantLines {
		if !slices.Contains(lines, w) {
			t.Errorf("profile lacks %q:\n%s", w, prof)
		}
	}
	// Seatbelt applies the last matching rule: every deny of protected
	// storage comes after every allow.
	lastAllow, firstProtect := -1, len(lines)
	for i, l := range lines {
		if strings.HasPrefix(l, "(allow file-write*") {
			lastAllow = i
		}
		if strings.HasPrefix(l, "(deny file-write* (") && i < firstProtect {
			firstProtect = i
		}
	}
	if firstProtect < lastAllow {
		t.Errorf("a protected-storage deny precedes an allow:\n%s", prof)
	}
	wantParams := []string{"-D", "TMP=/private/var/folders/x/T/ca-1", "-D", "ROOT0=/Users/u/ws", "-D", "ROOT1=/Users/u/extra.d",
		"-D", "P0=/Users/u/ws/.git", "-D", "P1=/Users/u/ws/sub/.git", "-D", "P2=/Users/u/data", "-D", "P3=/Users/u/ws/.agent",
		"-D", "D0=/Users/u/ws/sub"}
	if !slices.Equal(params, wantParams) {
		t.Errorf("params = %q\nwant     %q", params, wantParams)
	}

	// Read-only: nothing but the temp is writable, protected paths still denied.
	ro, _, err := seatbeltProfile(&plan{preset: ReadOnly, protected: []string{"/d"}}, "/t")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ro, "ROOT") || !strings.Contains(ro, `(param "P0")`) {
		t.Errorf("read-only profile:\n%s", ro)
	}

	// A root the regular expression cannot express is refused.
	if _, _, err := seatbeltProfile(&plan{preset: WorkspaceWrite, roots: []string{`/a"b`}}, "/t"); err == nil || !strings.Contains(err.Error(), `/a\"b`) {
		t.Errorf("err = %v", err)
	}
}
