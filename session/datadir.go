package session

import (
	"errors"
	"os"
	"path/filepath"
)

// ResolveDataDir returns the data directory (PROTOCOL.md §11): flag if set,
// else $CODING_AGENT_DATA_DIR, else $XDG_DATA_HOME/coding-agent, else
// ~/.local/share/coding-agent. The result is absolute; it is not created.
func ResolveDataDir(flag string) (string, error) {
	dir := flag
	if dir == "" {
		dir = os.Getenv("CODING_AGENT_DATA_DIR")
	}
	if dir == "" {
		if x := os.Getenv("XDG_DATA_HOME"); x != "" && filepath.IsAbs(x) {
			dir = filepath.Join(x, "coding-agent")
		}
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("cannot find the data directory: set --data-dir, CODING_AGENT_DATA_DIR or HOME")
		}
		dir = filepath.Join(home, ".local", "share", "coding-agent")
	}
	return filepath.Abs(dir)
}
