package tools

import (
	"os"
	"path/filepath"
)

// noSandboxHint names the sandbox that is missing on this platform.
const noSandboxHint = ": coding-agent's sandbox exists for Linux (namespaces, Landlock, seccomp) and macOS " +
	"(Seatbelt), not for Windows; on Windows bash runs only under full-access, with the host's bash " +
	"(Git for Windows or WSL)"

// hostBashCandidates are where Git for Windows puts bash when it is not on
// PATH (WSL's bash.exe is in System32, on PATH).
func hostBashCandidates() []string {
	var out []string
	for _, v := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)", "LocalAppData"} {
		if d := os.Getenv(v); d != "" {
			if v == "LocalAppData" {
				d = filepath.Join(d, "Programs")
			}
			out = append(out, filepath.Join(d, "Git", "bin", "bash.exe"))
		}
	}
	return out
}
