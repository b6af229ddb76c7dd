package session

import (
	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/display"
)

// oneLineTitles makes the titles of u safe for a client to show (issue 12
// #5): cut at the first line break and free of control characters, whatever
// a tool's arguments or a prompt held. Every update reaches the host
// through Session.send, so this is the one place for it.
func oneLineTitles(u rpc.SessionUpdate) {
	switch u := u.(type) {
	case *rpc.ToolCall:
		u.Title = display.Title(u.Title)
	case *rpc.ToolCallUpdate:
		if u.Title != "" {
			u.Title = display.Title(u.Title)
		}
	case *rpc.SessionInfoUpdate:
		if u.Title != nil {
			t := display.Title(*u.Title)
			u.Title = &t
		}
	}
}

// cleanTitles does the same for an event, before any host sees it: SDK
// hosts get the same one-line titles as ACP clients.
func cleanTitles(ev Event) {
	switch ev := ev.(type) {
	case *ToolCallStarted:
		ev.Title = display.Title(ev.Title)
	case *ToolCallUpdated:
		if ev.Title != "" {
			ev.Title = display.Title(ev.Title)
		}
	case *InfoChanged:
		if ev.Title != "" {
			ev.Title = display.Title(ev.Title)
		}
	}
}
