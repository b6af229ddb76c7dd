package session

import (
	"os"
	"testing"

	"github.com/coding-agent/coding-agent/sandbox"
	"github.com/coding-agent/coding-agent/session/mcp"
)

// TestMain lets the sandbox re-execute this test binary as its helper.
func TestMain(m *testing.M) {
	sandbox.MaybeRunHelper()
	mcp.MaybeRunSupervisor()
	os.Exit(m.Run())
}
