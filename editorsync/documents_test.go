package editorsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustDoc(t *testing.T, d *Documents, uri string) Doc {
	t.Helper()
	doc, ok := d.Get(uri)
	if !ok {
		t.Fatalf("Get(%s): not open", uri)
	}
	return doc
}

func TestDocumentsDirtyLifecycle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "café.txt")
	writeFile(t, path, "héllo 😀\nworld\n")
	uri := PathToURI(path)
	d := NewDocuments()

	if err := d.Open(uri, "plaintext", 1, "héllo 😀\nworld\n"); err != nil {
		t.Fatal(err)
	}
	if doc := mustDoc(t, d, uri); doc.Dirty || doc.Version != 1 || doc.Path != path || doc.URI != uri || doc.LanguageID != "plaintext" {
		t.Fatalf("after open: %+v, want clean version 1", doc)
	}
	if d.Unsaved(path) {
		t.Fatal("Unsaved after open of identical text")
	}

	// Incremental edit after the emoji (2 UTF-16 units): "héllo 😀" is 8 units.
	if err := d.Change(uri, 2, []TextChange{{Range: rng(0, 8, 0, 8), Text: "!"}}); err != nil {
		t.Fatal(err)
	}
	if doc := mustDoc(t, d, uri); !doc.Dirty || doc.Text != "héllo 😀!\nworld\n" || doc.Version != 2 {
		t.Fatalf("after edit: %+v", doc)
	}
	if !d.Unsaved(path) {
		t.Fatal("Unsaved = false for an edited buffer")
	}

	// The editor saves: the file now has the buffer's text.
	writeFile(t, path, "héllo 😀!\nworld\n")
	if err := d.Save(uri); err != nil {
		t.Fatal(err)
	}
	if doc := mustDoc(t, d, uri); doc.Dirty {
		t.Fatalf("after save: dirty")
	}
	if d.Unsaved(path) {
		t.Fatal("Unsaved after save")
	}

	// Undo back to the disk text by a full change: clean again, since dirty
	// is "differs from disk".
	if err := d.Change(uri, 3, []TextChange{{Text: "x"}}); err != nil {
		t.Fatal(err)
	}
	if err := d.Change(uri, 4, []TextChange{{Text: "héllo 😀!\nworld\n"}}); err != nil {
		t.Fatal(err)
	}
	if d.Unsaved(path) {
		t.Fatal("Unsaved when text equals disk again")
	}

	// The file changes on disk under a clean buffer: the buffer is stale,
	// but it holds no unsaved work, so tools may change the file (the
	// editor reloads it when told).
	writeFile(t, path, "changed elsewhere\n")
	if d.Unsaved(path) {
		t.Fatal("Unsaved = true for a stale but unedited buffer")
	}
	// The user types into the stale buffer: now that is unsaved work.
	if err := d.Change(uri, 5, []TextChange{{Range: rng(0, 0, 0, 0), Text: "typed "}}); err != nil {
		t.Fatal(err)
	}
	if !d.Unsaved(path) {
		t.Fatal("Unsaved = false after typing into a stale buffer")
	}
	// The editor reloads the file: clean.
	if err := d.Change(uri, 6, []TextChange{{Text: "changed elsewhere\n"}}); err != nil {
		t.Fatal(err)
	}
	if d.Unsaved(path) {
		t.Fatal("Unsaved after the editor reloaded")
	}

	// The file is deleted: an unedited buffer holds nothing to lose, an
	// edited one does.
	os.Remove(path)
	if d.Unsaved(path) {
		t.Fatal("Unsaved = true for an unedited buffer of a deleted file")
	}
	if err := d.Change(uri, 7, []TextChange{{Text: "new text"}}); err != nil {
		t.Fatal(err)
	}
	if !d.Unsaved(path) {
		t.Fatal("Unsaved = false for an edited buffer of a deleted file")
	}

	if err := d.Close(uri); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.Get(uri); ok {
		t.Fatal("Get after Close")
	}
	if d.Unsaved(path) {
		t.Fatal("Unsaved for a closed document")
	}
}

func TestDocumentsErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.txt")
	writeFile(t, path, "abc")
	uri := PathToURI(path)
	d := NewDocuments()
	if err := d.Open(uri, "text", 3, "abc"); err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		name    string
		call    func() error
		wantErr string
	}{
		{"stale version", func() error { return d.Change(uri, 3, []TextChange{{Text: "zzz"}}) }, "version 3 is not after the current version 3"},
		{"older version", func() error { return d.Change(uri, 1, []TextChange{{Text: "zzz"}}) }, "version 1"},
		{"change not open", func() error { return d.Change(PathToURI(filepath.Join(dir, "b")), 9, nil) }, "is not open"},
		{"save not open", func() error { return d.Save(PathToURI(filepath.Join(dir, "b"))) }, "is not open"},
		{"close not open", func() error { return d.Close(PathToURI(filepath.Join(dir, "b"))) }, "is not open"},
		{"open non-file URI", func() error { return d.Open("untitled:Untitled-1", "text", 1, "") }, `didOpen: uri "untitled:Untitled-1": scheme "untitled"`},
		{"change non-file URI", func() error { return d.Change("untitled:1", 2, nil) }, "didChange"},
	} {
		t.Run(test.name, func(t *testing.T) {
			err := test.call()
			if err == nil || !strings.Contains(err.Error(), test.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, test.wantErr)
			}
		})
	}
	// A rejected change leaves the document as it was.
	if doc := mustDoc(t, d, uri); doc.Text != "abc" || doc.Version != 3 {
		t.Fatalf("after rejected changes: %+v", doc)
	}
}

func TestDocumentsReopenReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.txt")
	uri := PathToURI(path)
	d := NewDocuments()
	if err := d.Open(uri, "text", 5, "one"); err != nil {
		t.Fatal(err)
	}
	if err := d.Open(uri, "go", 1, "two"); err != nil {
		t.Fatal(err)
	}
	if doc := mustDoc(t, d, uri); doc.Text != "two" || doc.Version != 1 || doc.LanguageID != "go" {
		t.Fatalf("after reopen: %+v", doc)
	}
	if n := len(d.List()); n != 1 {
		t.Fatalf("List has %d documents, want 1", n)
	}
}

func TestDocumentsUnsavedThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(real, "a.txt"), "disk")
	d := NewDocuments()
	// The editor opened it through the symlink; a tool asks by the real path.
	if err := d.Open(PathToURI(filepath.Join(link, "a.txt")), "text", 1, "buffer"); err != nil {
		t.Fatal(err)
	}
	if !d.Unsaved(filepath.Join(real, "a.txt")) {
		t.Fatal("Unsaved(real path) = false for a dirty buffer opened through a symlink")
	}
	if !d.Unsaved(filepath.Join(link, "a.txt")) {
		t.Fatal("Unsaved(link path) = false")
	}
	if d.Unsaved(filepath.Join(real, "other.txt")) {
		t.Fatal("Unsaved for a file that is not open")
	}
}
