package tools_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/coding-agent/coding-agent/tools"
)

// A tool can be used on its own, without a session: build it for a
// working directory and call it with JSON arguments.
func ExampleNewRead() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		panic(err)
	}

	read, err := tools.NewRead(dir, tools.Options{})
	if err != nil {
		panic(err)
	}
	args := []byte(`{"path":"notes.txt","offset":2}`)
	fmt.Println(tools.CallTitle(read, string(args)), "·", read.Kind())
	res := tools.Run(context.Background(), read, tools.Call{Args: args})
	fmt.Printf("%q error=%v\n", res.Content[0].Text, res.IsError)

	// Invalid arguments are refused before anything runs.
	_, err = read.Validate([]byte(`{"path":""}`))
	fmt.Println(err)
	// Output:
	// Read notes.txt · read
	// "two\nthree" error=false
	// invalid arguments for read: /path: minLength: got 0 characters, want at least 1
}
