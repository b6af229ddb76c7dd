package editorsync

import (
	"bytes"
	"container/list"
	"io/fs"
	"sync"
)

// statKey identifies one version of a file cheaply: if any of these
// changed, the content may have. The change time cannot be set by a user,
// so a rewrite that restores size and modification time is still seen.
type statKey struct {
	size  int64
	mtime int64
	ctime int64
	ino   uint64
	mode  fs.FileMode
}

func keyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	k.ino, k.ctime = sysStat(fi)
	return k
}

// isText reports whether b looks like text: no NUL byte, as the read tool
// decides.
func isText(b []byte) bool { return bytes.IndexByte(b, 0) < 0 }

// contentCache keeps the text of recently seen small files, keyed by path
// and valid for one statKey, least recently used first out. It is what
// makes old text available for bash diffs without reading the tree.
type contentCache struct {
	max int64

	// mu guards the fields below.
	mu    sync.Mutex
	total int64
	m     map[string]*list.Element // of *cacheEntry
	lru   list.List                // front: most recently used
}

type cacheEntry struct {
	path string
	key  statKey
	text string
}

func newContentCache(max int64) *contentCache {
	if max <= 0 {
		max = 16 << 20
	}
	return &contentCache{max: max, m: map[string]*list.Element{}}
}

func (c *contentCache) get(path string, key statKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[path]
	if el == nil {
		return "", false
	}
	e := el.Value.(*cacheEntry)
	if e.key != key {
		return "", false
	}
	c.lru.MoveToFront(el)
	return e.text, true
}

// peek returns the cached text of path whatever its stat: the text the
// file had when the watcher last saw it, which is what "before" means for
// a change being reported now.
func (c *contentCache) peek(path string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el := c.m[path]
	if el == nil {
		return "", false
	}
	return el.Value.(*cacheEntry).text, true
}

func (c *contentCache) put(path string, key statKey, text string) {
	if int64(len(text)) > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[path]; el != nil {
		c.removeLocked(el)
	}
	c.m[path] = c.lru.PushFront(&cacheEntry{path: path, key: key, text: text})
	c.total += int64(len(text))
	for c.total > c.max {
		c.removeLocked(c.lru.Back())
	}
}

func (c *contentCache) drop(path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el := c.m[path]; el != nil {
		c.removeLocked(el)
	}
}

func (c *contentCache) removeLocked(el *list.Element) {
	e := el.Value.(*cacheEntry)
	c.lru.Remove(el)
	delete(c.m, e.path)
	c.total -= int64(len(e.text))
}
