package session_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/coding-agent/coding-agent/session"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// A host runs a session: it sends a prompt, sees what happens through its
// event handler, and decides on what needs the user's approval. Here the
// model is a fake Anthropic server that asks to write a file, then answers.
func Example() {
	srv := modeltest.StartAnthropic(modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("toolu_1", "write", `{"path":"hello.txt","content":"Hello!\n","justification":"You asked for it."}`)}},
		{Steps: []modeltest.Step{modeltest.Text("I wrote hello.txt.")}},
	})
	defer srv.Close()
	model, err := models.NewAnthropic("claude-sonnet-4-5", "test-key", srv.BaseURL, models.Options{})
	if err != nil {
		panic(err)
	}
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	env := &session.Env{Getenv: func(string) string { return "" }}
	defer env.Shutdown()
	s, err := env.NewSession(session.Options{
		Cwd:   dir,
		Model: model,
		Tools: []string{"read", "write"},
		// The default preset, read-only, asks before any change.
		Approve: func(ctx context.Context, req *session.ApprovalRequest) (session.Decision, error) {
			fmt.Printf("approve: %s %s (%q)\n", req.Tool, filepath.Base(req.Path), req.Justification)
			return session.AllowOnce, nil
		},
		OnEvent: func(ev session.Event) {
			switch ev := ev.(type) {
			case *session.ToolCallStarted:
				fmt.Println("tool call:", ev.Tool, ev.Kind)
			case *session.ToolCallFinished:
				fmt.Println("result:", ev.Status, ev.Text[0])
			case *session.MessageChunk:
				fmt.Println("agent:", ev.Text)
			}
		},
	})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	stop, err := s.Prompt(context.Background(), []session.Content{session.Text("Write hello.txt")})
	if err != nil {
		panic(err)
	}
	fmt.Println("stop:", stop)
	// Output:
	// tool call: write edit
	// approve: write hello.txt ("You asked for it.")
	// result: completed Created hello.txt (7 bytes)
	// agent: I wrote hello.txt.
	// stop: end_turn
}

// Other front ends (a browser tab, a terminal) watch a session through a
// subscription of their own: a bounded queue that never holds the agent
// back. A subscriber that falls behind gets a *session.Lagged.
func ExampleSession_Subscribe() {
	srv := modeltest.StartAnthropic(modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Text("Hello"), modeltest.Text(", world.")}},
	})
	defer srv.Close()
	model, err := models.NewAnthropic("claude-sonnet-4-5", "test-key", srv.BaseURL, models.Options{})
	if err != nil {
		panic(err)
	}
	env := &session.Env{Getenv: func(string) string { return "" }}
	defer env.Shutdown()
	s, err := env.NewSession(session.Options{Cwd: os.TempDir(), Model: model, Tools: []string{}})
	if err != nil {
		panic(err)
	}
	defer s.Close()

	seen := make(chan session.Event, 16)
	unsubscribe := s.Subscribe(func(ev session.Event) { seen <- ev })
	if _, err := s.Prompt(context.Background(), []session.Content{session.Text("Say hello")}); err != nil {
		panic(err)
	}
	// The subscriber runs on its own: read until the answer is complete.
	var answer string
	for answer != "Hello, world." {
		switch ev := (<-seen).(type) {
		case *session.UserMessage:
			fmt.Println("user:", ev.Content.Text)
		case *session.MessageChunk:
			answer += ev.Text
		}
	}
	unsubscribe()
	fmt.Println("agent:", answer)
	// Output:
	// user: Say hello
	// agent: Hello, world.
}
