package session

import (
	"os"
	"testing"

	"github.com/coding-agent/coding-agent/sandbox"
)

// TestMain lets the sandbox re-execute this test binary as its helper.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	os.Exit(m.Run())
}
