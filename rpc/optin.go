package rpc

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
)

// ExtensionPrefix is the vendor prefix of the coding-agent extension
// methods (PROTOCOL.md §9).
const ExtensionPrefix = "_coding-agent/"

// Extensions are opt-in (PROTOCOL.md §2): the agent sends a method under
// [ExtensionPrefix] (a notification or a request) only to a client that
// asked for it in initialize, as
//
//	"clientCapabilities": {"_meta": {"coding-agent": {"extensions": true}}}
//
// for every extension, or a list of the method names it handles, e.g.
// {"extensions": ["_coding-agent/files_changed"]}. Anything else, or no
// initialize at all, means none. Requests from the client to extension
// methods are served whatever it asked for.
type optIns struct {
	mu  sync.Mutex
	all bool
	set map[string]bool
}

// parse records the opt-ins of an initialize request's params. A later
// initialize replaces them.
func (o *optIns) parse(params json.RawMessage) {
	var p struct {
		ClientCapabilities *struct {
			Meta *struct {
				CodingAgent *struct {
					Extensions json.RawMessage `json:"extensions"`
				} `json:"coding-agent"`
			} `json:"_meta"`
		} `json:"clientCapabilities"`
	}
	all, set := false, map[string]bool(nil)
	if json.Unmarshal(params, &p) == nil && p.ClientCapabilities != nil && p.ClientCapabilities.Meta != nil && p.ClientCapabilities.Meta.CodingAgent != nil {
		raw := bytes.TrimSpace(p.ClientCapabilities.Meta.CodingAgent.Extensions)
		var names []string
		switch {
		case string(raw) == "true":
			all = true
		case json.Unmarshal(raw, &names) == nil:
			for _, n := range names {
				if set == nil {
					set = map[string]bool{}
				}
				set[n] = true
			}
		}
	}
	o.mu.Lock()
	o.all, o.set = all, set
	o.mu.Unlock()
}

// allows reports whether method may be sent to the client.
func (o *optIns) allows(method string) bool {
	if !strings.HasPrefix(method, ExtensionPrefix) {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all || o.set[method]
}
