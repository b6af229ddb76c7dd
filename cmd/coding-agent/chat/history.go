package chat

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"sync"
)

// histBreak stands for a line break in a prompt recalled from the history
// (the line editor edits one line); sending turns it back into one.
const histBreak = "⏎ "

// maxHistory is how many prompts are kept.
const maxHistory = 1000

// history is the prompts sent, oldest first, kept in a file (one JSON
// string a line) across runs. It implements term.History; the line
// editor's own Add is ignored, the chat adds each whole prompt.
type history struct {
	mu      sync.Mutex
	path    string
	entries []string
}

func loadHistory(path string) *history {
	h := &history{path: path}
	if path == "" {
		return h
	}
	f, err := os.Open(path)
	if err != nil {
		return h
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > maxHistory {
		h.entries = h.entries[len(h.entries)-maxHistory:]
	}
	return h
}

// Add is the line editor's; see add.
func (h *history) Add(string) {}

func (h *history) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// At returns the idx-th newest prompt (0 the newest).
func (h *history) At(idx int) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.ReplaceAll(h.entries[len(h.entries)-1-idx], "\n", histBreak)
}

// add records a prompt sent, in memory and in the file (mode 0600: the
// prompts may hold secrets).
func (h *history) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.entries); n > 0 && h.entries[n-1] == s {
		return
	}
	h.entries = append(h.entries, s)
	if len(h.entries) > maxHistory {
		h.entries = h.entries[1:]
	}
	if h.path == "" {
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	f, err := os.OpenFile(h.path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	f.Write(append(b, '\n'))
	f.Close()
}
