package tools

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func createOutput(t *testing.T, s *OutputStore, callID, content string) string {
	t.Helper()
	f, err := s.Create(callID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

func TestOutputDir(t *testing.T) {
	if got := OutputDir("/data"); got != "/data/outputs" {
		t.Errorf("OutputDir = %q", got)
	}
}

func TestOutputStoreCreateAndList(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "outputs")
	s := NewOutputStore(dir)
	list, err := s.List()
	if err != nil || len(list) != 0 {
		t.Fatalf("List of a missing directory = %v, %v; want empty", list, err)
	}
	before := time.Now()
	ids := []string{"toolu_01", "", "a/b.c é", strings.Repeat("x", 500)}
	var paths []string
	for i, id := range ids {
		paths = append(paths, createOutput(t, s, id, strings.Repeat("y", i)))
	}
	after := time.Now()

	if runtime.GOOS != "windows" {
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("directory mode %v, want 0700", fi.Mode().Perm())
		}
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s mode %v, want 0600", p, fi.Mode().Perm())
			}
		}
	}
	// A foreign file in the directory is not listed.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}

	list, err = s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(ids) {
		t.Fatalf("List has %d entries, want %d: %+v", len(list), len(ids), list)
	}
	for i, o := range list {
		wantID := ids[i]
		if len(wantID) > maxCallIDInName {
			wantID = wantID[:maxCallIDInName]
		}
		if o.Path != paths[i] || o.ToolCallID != wantID || o.Bytes != int64(i) {
			t.Errorf("entry %d = %+v, want path %s id %q bytes %d", i, o, paths[i], wantID, i)
		}
		if !filepath.IsAbs(o.Path) || filepath.Base(o.Path) == "" {
			t.Errorf("entry %d path %q is not absolute", i, o.Path)
		}
		if o.CreatedAt.Before(before.Add(-time.Second)) || o.CreatedAt.After(after.Add(time.Second)) {
			t.Errorf("entry %d CreatedAt %v outside [%v, %v]", i, o.CreatedAt, before, after)
		}
	}

	// The JSON shape of PROTOCOL.md §9.
	raw, err := json.Marshal(list[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	for _, k := range []string{"path", "bytes", "toolCallId", "createdAt"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON %s lacks %q", raw, k)
		}
	}
}

func TestOutputStoreSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	p := createOutput(t, NewOutputStore(dir), "call-7", "hello")
	// A new store on the same directory: another process, later.
	list, err := NewOutputStore(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Path != p || list[0].ToolCallID != "call-7" || list[0].Bytes != 5 {
		t.Errorf("List after restart = %+v", list)
	}
}

func TestOutputStoreRelativeDirIsMadeAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	s := NewOutputStore("outs")
	p := createOutput(t, s, "c", "x")
	if !filepath.IsAbs(p) || !filepath.IsAbs(s.Dir()) {
		t.Errorf("path %q, dir %q: want absolute", p, s.Dir())
	}
}

func TestOutputStoreRemove(t *testing.T) {
	dir := t.TempDir()
	s := NewOutputStore(dir)
	keep := createOutput(t, s, "keep", "k")
	gone := createOutput(t, s, "gone", "g")

	// A file with a store-like name outside the directory.
	other := NewOutputStore(t.TempDir())
	outside := createOutput(t, other, "x", "o")
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	nested := createOutput(t, NewOutputStore(sub), "n", "n")
	// A symlink with a store-like name pointing at a file elsewhere.
	symlink := filepath.Join(dir, "1.YQ.9.out")
	if err := os.Symlink(outside, symlink); err != nil {
		t.Fatal(err)
	}

	refused := []struct {
		name, path, want string
	}{
		{"outside the directory", outside, "not inside"},
		{"dot-dot escape", filepath.Join(dir, "..", filepath.Base(filepath.Dir(outside)), filepath.Base(outside)), "not inside"},
		{"nested directory", nested, "not inside"},
		{"relative", filepath.Base(keep), "not an absolute path"},
		{"foreign file in the directory", foreign, "not a retained output"},
		{"the directory itself", dir, "not inside"},
		{"symlink", symlink, "not a regular file"},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Remove(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.path) {
				t.Errorf("Remove(%q) = %v, want an error naming the path and %q", tt.path, err, tt.want)
			}
		})
	}
	for _, p := range []string{outside, foreign, nested, keep, symlink} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}

	if err := s.Remove(gone); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still exists", gone)
	}
	if err := s.Remove(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second Remove = %v, want not-exist", err)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0].Path != keep {
		t.Errorf("List = %+v, want only %s", list, keep)
	}
}

func TestOutputStoreRemoveThroughSymlinkedDir(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Skip(err)
	}
	s := NewOutputStore(link)
	p := createOutput(t, s, "c", "x")
	viaReal := filepath.Join(real, filepath.Base(p))
	if err := s.Remove(viaReal); err != nil {
		t.Errorf("Remove through the resolved directory: %v", err)
	}
}

func TestOutputStoreRemoveAll(t *testing.T) {
	dir := t.TempDir()
	s := NewOutputStore(dir)
	for _, id := range []string{"a", "b", "c"} {
		createOutput(t, s, id, id)
	}
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := s.RemoveAll()
	if err != nil || n != 3 {
		t.Errorf("RemoveAll = %d, %v; want 3", n, err)
	}
	if list, _ := s.List(); len(list) != 0 {
		t.Errorf("List after RemoveAll = %+v", list)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("RemoveAll removed a foreign file: %v", err)
	}
	if n, err := NewOutputStore(filepath.Join(dir, "missing")).RemoveAll(); n != 0 || err != nil {
		t.Errorf("RemoveAll on a missing directory = %d, %v", n, err)
	}
}

func TestParseOutputName(t *testing.T) {
	for _, name := range []string{
		"notes.txt", "1.abc.out", "x.YQ.123.out", "-5.YQ.1.out", "1.!!.1.out", "1.YQ..out", "1.YQ.1.2.out",
	} {
		if _, _, ok := parseOutputName(name); ok {
			t.Errorf("parseOutputName(%q) accepted", name)
		}
	}
	id, at, ok := parseOutputName("1000000000.YQ.42.out")
	if !ok || id != "a" || !at.Equal(time.Unix(1, 0)) {
		t.Errorf("parseOutputName = %q %v %v", id, at, ok)
	}
}
