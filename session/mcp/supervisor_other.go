//go:build unix && !linux

package mcp

// becomeSubreaper is Linux-only; elsewhere the process group is what the
// supervisor kills.
func becomeSubreaper() {}

func killOrphans() {}
