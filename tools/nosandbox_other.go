//go:build !windows

package tools

// noSandboxHint names the sandbox that is missing on this platform; on
// Linux and macOS the probe's reason says it.
const noSandboxHint = ""

// hostBashCandidates: bash is found on PATH.
func hostBashCandidates() []string { return nil }
