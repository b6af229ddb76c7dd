package editorsync

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/coding-agent/coding-agent/sandbox/fspath"
)

// Doc is a copy of one open document's state.
type Doc struct {
	// URI is the URI exactly as the editor sent it in didOpen.
	URI string
	// Path is the absolute, cleaned file path of URI.
	Path       string
	LanguageID string
	// Version is the version of the last didOpen or didChange.
	Version int
	// Text is the buffer's text, with every change applied.
	Text string
	// Dirty reports whether the buffer holds unsaved work: Text differs
	// both from the file on disk and from the text last known to be on
	// disk (at open or save). A buffer the user has not edited is clean
	// even when the file changed under it (it is stale; the editor reloads
	// it). A file that does not exist or cannot be read counts as
	// different.
	Dirty bool
}

// Documents is the set of documents the editor has open, keyed by file
// path. It is safe for concurrent use; calls that change a document take
// effect in the order they are made, which is why the caller must make
// them in the order the notifications arrived.
//
// Dirty means "the buffer holds work that is not on disk": its text differs
// from the file now and from the file as it was at open or at the last
// save. When the file changes on disk under an unedited buffer (a bash
// command reformatted it, say), the buffer stays clean: it is stale, not
// dirty, and tools may go on changing the file. Once the user types into
// it, it is dirty until saved or reloaded.
type Documents struct {
	// watch and unwatch, when set by [Sync], are called after a document
	// is opened or closed, outside mu, with the document's path.
	watch, unwatch func(path string)

	// mu guards the fields below.
	mu   sync.Mutex
	docs map[string]*docState // by cleaned path
	// canon maps the symlink-resolved path of each document to it, so a
	// tool that resolved symlinks still finds the buffer.
	canon map[string]*docState
}

type docState struct {
	Doc
	canon string
	// textSum is sha256(Text), valid when textSumOK.
	textSum   [sha256.Size]byte
	textSumOK bool
	// disk is what we know of the file on disk, valid when diskOK.
	disk   diskState
	diskOK bool
	// synced is the file as it was at open or at the last save.
	synced diskState
}

type diskState struct {
	exists bool // and was read
	sum    [sha256.Size]byte
}

// NewDocuments returns an empty set of documents.
func NewDocuments() *Documents {
	return &Documents{docs: map[string]*docState{}, canon: map[string]*docState{}}
}

// Open records a didOpen. Opening a document that is already open replaces
// its language, version and text, as if it had been closed first.
func (d *Documents) Open(uri, languageID string, version int, text string) error {
	path, err := URIToPath(uri)
	if err != nil {
		return fmt.Errorf("didOpen: %w", err)
	}
	st := &docState{Doc: Doc{URI: uri, Path: path, LanguageID: languageID, Version: version, Text: text}}
	st.canon = fspath.CanonicalOr(path)
	st.disk = readDisk(path)
	st.diskOK = true
	st.synced = st.disk
	d.mu.Lock()
	if old := d.docs[path]; old != nil {
		delete(d.canon, old.canon)
	}
	d.docs[path] = st
	d.canon[st.canon] = st
	watch := d.watch
	d.mu.Unlock()
	if watch != nil {
		watch(path)
	}
	return nil
}

// Change records a didChange: it applies changes in order (see
// [ApplyChanges] for how positions are read and clamped) and sets the
// version. The version must be greater than the current one; a stale or
// repeated version is rejected and the document is left as it was, because
// applying incremental edits to the wrong base text would corrupt the mirror
// silently.
func (d *Documents) Change(uri string, version int, changes []TextChange) error {
	path, err := URIToPath(uri)
	if err != nil {
		return fmt.Errorf("didChange: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.docs[path]
	if st == nil {
		return fmt.Errorf("didChange: document %s is not open", uri)
	}
	if version <= st.Version {
		return fmt.Errorf("didChange: document %s: version %d is not after the current version %d", uri, version, st.Version)
	}
	st.Text = ApplyChanges(st.Text, changes)
	st.Version = version
	st.textSumOK = false
	return nil
}

// Save records a didSave: the editor wrote the buffer, so the disk state is
// read again.
func (d *Documents) Save(uri string) error {
	path, err := URIToPath(uri)
	if err != nil {
		return fmt.Errorf("didSave: %w", err)
	}
	disk := readDisk(path)
	d.mu.Lock()
	defer d.mu.Unlock()
	st := d.docs[path]
	if st == nil {
		return fmt.Errorf("didSave: document %s is not open", uri)
	}
	st.disk, st.diskOK = disk, true
	st.synced = disk
	return nil
}

// Close records a didClose and forgets the document.
func (d *Documents) Close(uri string) error {
	path, err := URIToPath(uri)
	if err != nil {
		return fmt.Errorf("didClose: %w", err)
	}
	d.mu.Lock()
	st := d.docs[path]
	if st == nil {
		d.mu.Unlock()
		return fmt.Errorf("didClose: document %s is not open", uri)
	}
	delete(d.docs, path)
	if d.canon[st.canon] == st {
		delete(d.canon, st.canon)
	}
	unwatch := d.unwatch
	d.mu.Unlock()
	if unwatch != nil {
		unwatch(path)
	}
	return nil
}

// Get returns a copy of the open document at uri.
func (d *Documents) Get(uri string) (Doc, bool) {
	path, err := URIToPath(uri)
	if err != nil {
		return Doc{}, false
	}
	return d.GetPath(path)
}

// GetPath returns a copy of the open document at the absolute path.
func (d *Documents) GetPath(path string) (Doc, bool) {
	d.mu.Lock()
	st := d.lookupLocked(path)
	var needDisk bool
	if st != nil {
		needDisk = !st.diskOK
	}
	d.mu.Unlock()
	if st == nil {
		return Doc{}, false
	}
	if needDisk {
		d.refreshDisk(st)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	doc := st.Doc
	doc.Dirty = st.dirtyLocked()
	return doc, true
}

// List returns copies of all open documents, in no particular order.
func (d *Documents) List() []Doc {
	d.mu.Lock()
	paths := make([]string, 0, len(d.docs))
	for p := range d.docs {
		paths = append(paths, p)
	}
	d.mu.Unlock()
	docs := make([]Doc, 0, len(paths))
	for _, p := range paths {
		if doc, ok := d.GetPath(p); ok {
			docs = append(docs, doc)
		}
	}
	return docs
}

// Unsaved reports whether the editor holds unsaved changes to the file at
// the absolute path: it is open and its text differs from the file on disk.
// The file is read again for this check, because edit and write rely on it
// to never clobber a buffer. It satisfies the tools package's Buffers
// interface.
func (d *Documents) Unsaved(path string) bool {
	d.mu.Lock()
	st := d.lookupLocked(path)
	d.mu.Unlock()
	if st == nil {
		return false
	}
	d.refreshDisk(st)
	d.mu.Lock()
	defer d.mu.Unlock()
	return st.dirtyLocked()
}

// isOpen reports whether path is an open document and returns its URI.
func (d *Documents) isOpen(path string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.lookupLocked(path); st != nil {
		return st.URI, true
	}
	return "", false
}

// diskChanged marks the disk state of the document at path as unknown; it
// is read again when next needed.
func (d *Documents) diskChanged(path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if st := d.lookupLocked(path); st != nil {
		st.diskOK = false
	}
}

func (d *Documents) refreshDisk(st *docState) {
	disk := readDisk(st.Path)
	d.mu.Lock()
	st.disk, st.diskOK = disk, true
	d.mu.Unlock()
}

// lookupLocked finds a document by its path, or by the symlink-resolved
// form of path.
func (d *Documents) lookupLocked(path string) *docState {
	path = filepath.Clean(path)
	if st := d.docs[path]; st != nil {
		return st
	}
	if len(d.canon) == 0 {
		return nil
	}
	return d.canon[fspath.CanonicalOr(path)]
}

func (st *docState) dirtyLocked() bool {
	if !st.textSumOK {
		st.textSum = sha256.Sum256([]byte(st.Text))
		st.textSumOK = true
	}
	if st.synced.exists && st.textSum == st.synced.sum {
		return false // unedited since open or save: nothing to lose
	}
	if st.disk.exists && st.textSum == st.disk.sum {
		st.synced = st.disk // reloaded, or edited back to the file
		return false
	}
	return true
}

// readDisk hashes the file at path. A missing or unreadable file (or a
// directory) reads as not existing, which makes any buffer dirty: failing
// safe blocks a write rather than risking a clobbered buffer.
func readDisk(path string) diskState {
	f, err := os.Open(path)
	if err != nil {
		return diskState{}
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return diskState{}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return diskState{}
	}
	var ds diskState
	ds.exists = true
	h.Sum(ds.sum[:0])
	return ds
}
