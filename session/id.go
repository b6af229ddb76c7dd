package session

import (
	"crypto/rand"
	"encoding/hex"
)

// newID returns a random identifier with a prefix, e.g. "sess_3f9a…".
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	return prefix + "_" + hex.EncodeToString(b[:])
}
