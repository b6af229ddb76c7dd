package mcp

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/coding-agent/coding-agent/session/mcp/mcptest"
)

func TestMain(m *testing.M) {
	MaybeRunSupervisor()
	mcptest.MaybeRunFixture()
	if os.Getenv(agentEnv) == "1" {
		os.Exit(runAgent())
	}
	os.Exit(m.Run())
}

// agentEnv makes the test binary stand in for the agent: it starts a set
// with a server that spawns a descendant, says "ready" on stdout and
// waits to be killed.
const agentEnv = "CODING_AGENT_MCP_TEST_AGENT"

func runAgent() int {
	set := Start(context.Background(), []ServerConfig{{Name: "fx", Type: Stdio, Command: os.Args[0], Env: []string{mcptest.Fixture("spawn"), os.Getenv("MARKER")}}}, Options{})
	if len(set.Failures()) > 0 {
		fmt.Println(set.Failures())
		return 1
	}
	fmt.Println("ready")
	select {}
}
