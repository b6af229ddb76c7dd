package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strings"
)

// MaxNameLen is the longest tool name the model providers accept
// (Anthropic and OpenAI: ^[a-zA-Z0-9_-]{1,64}$).
const MaxNameLen = 64

// sanitize replaces every character outside [a-zA-Z0-9_-] with '_'.
func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// toolKey identifies a server's tool.
type toolKey struct{ server, tool string }

// assignNames gives every tool its model-facing name: mcp__<server>__<tool>
// with characters outside [a-zA-Z0-9_-] replaced by '_'. A name that is
// too long, or that an earlier tool (in (server, tool) order) already has,
// is cut and ends with '_' and six hex digits of a hash of the server and
// tool names: the result depends only on the set of tools, never on the
// order servers answered in.
func assignNames(keys []toolKey) map[toolKey]string {
	sorted := append([]toolKey(nil), keys...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].server != sorted[j].server {
			return sorted[i].server < sorted[j].server
		}
		return sorted[i].tool < sorted[j].tool
	})
	taken := map[string]bool{}
	out := make(map[toolKey]string, len(keys))
	// Plain names first, so a hashed name never takes a plain one's place.
	var rest []toolKey
	for _, k := range sorted {
		n := "mcp__" + sanitize(k.server) + "__" + sanitize(k.tool)
		if len(n) <= MaxNameLen && !taken[n] {
			taken[n] = true
			out[k] = n
			continue
		}
		rest = append(rest, k)
	}
	for _, k := range rest {
		base := "mcp__" + sanitize(k.server) + "__" + sanitize(k.tool)
		sum := sha256.Sum256([]byte(k.server + "\x00" + k.tool))
		h := hex.EncodeToString(sum[:])
		for i := 6; ; i++ {
			suffix := "_" + h[:min(i, len(h))]
			if i > len(h) {
				suffix += "_" + strings.Repeat("x", i-len(h))
			}
			n := base
			if len(n) > MaxNameLen-len(suffix) {
				n = n[:MaxNameLen-len(suffix)]
			}
			n += suffix
			if !taken[n] {
				taken[n] = true
				out[k] = n
				break
			}
		}
	}
	return out
}
