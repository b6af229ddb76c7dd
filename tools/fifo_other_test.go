//go:build !unix

package tools

import "testing"

func mkfifo(t *testing.T, path string) {
	t.Helper()
	t.Skipf("no named pipes in the file system here: %s", path)
}
