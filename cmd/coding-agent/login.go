package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coding-agent/coding-agent/session"
)

// runLogin implements `coding-agent login`: it asks for a provider, its
// key and, for a local server, the base URL, and stores them in the data
// directory (credentials.json, mode 0600). ACP clients run it in a
// terminal (the "login" auth method). The key is read from the terminal
// with echo off, or from stdin when stdin is not a terminal; it is never a
// flag (a command line is visible to every user of the machine).
func runLogin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("login", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	provider := fs.String("provider", "", "anthropic, openai or local")
	baseURL := fs.String("base-url", "", "base URL of an OpenAI-compatible server")
	model := fs.String("model", "", "default model as provider/model")
	dataDir := fs.String("data-dir", "", "data directory")
	if err := fs.Parse(args); err != nil {
		return exitCode(usagef("login: %v", err), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("login: unexpected argument %q (the key is read from the terminal or stdin, never from the command line)", fs.Arg(0)), stderr)
	}
	dir, err := session.ResolveDataDir(*dataDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	env := &session.Env{DataDir: dir}
	tty := false
	if f, ok := stdin.(*os.File); ok {
		tty = isTerminal(f)
	}
	in := bufio.NewReader(stdin)
	ask := func(prompt, def string) (string, error) {
		if !tty {
			return def, nil
		}
		if def != "" {
			fmt.Fprintf(stderr, "%s [%s]: ", prompt, def)
		} else {
			fmt.Fprintf(stderr, "%s: ", prompt)
		}
		line, err := in.ReadString('\n')
		if err != nil && line == "" {
			return "", errors.New("login: no answer (end of input)")
		}
		if line = strings.TrimSpace(line); line == "" {
			return def, nil
		}
		return line, nil
	}

	p := strings.ToLower(*provider)
	if p == "" {
		if !tty {
			return exitCode(usagef("login: --provider is required when stdin is not a terminal"), stderr)
		}
		fmt.Fprintln(stderr, "Which model provider?")
		fmt.Fprintln(stderr, "  1) Anthropic (ANTHROPIC_API_KEY)")
		fmt.Fprintln(stderr, "  2) OpenAI (OPENAI_API_KEY)")
		fmt.Fprintln(stderr, "  3) An OpenAI-compatible server: Ollama, vLLM, llama.cpp, LM Studio (OPENAI_BASE_URL)")
		a, err := ask("Choose 1, 2 or 3", "1")
		if err != nil {
			return exitCode(err, stderr)
		}
		p = map[string]string{"1": "anthropic", "2": "openai", "3": "local"}[a]
		if p == "" {
			p = strings.ToLower(a)
		}
	}
	creds, err := env.LoadCredentials()
	if err != nil {
		return exitCode(err, stderr)
	}
	switch p {
	case "anthropic":
		key, err := readKey(stdin, in, tty, stderr, "Anthropic API key")
		if err != nil {
			return exitCode(err, stderr)
		}
		creds.Anthropic = &session.ProviderCredentials{APIKey: key, BaseURL: *baseURL}
	case "openai", "local":
		base := *baseURL
		if p == "local" && base == "" {
			if base, err = ask("Base URL of the server", "http://localhost:11434/v1"); err != nil {
				return exitCode(err, stderr)
			}
			if base == "" {
				return exitCode(usagef("login: --base-url is required for a local server"), stderr)
			}
		}
		label := "OpenAI API key"
		if p == "local" {
			label = "API key of the server (empty if it needs none)"
		}
		key, err := readKey(stdin, in, tty, stderr, label)
		if err != nil && (p != "local" || !errors.Is(err, errNoKey)) {
			return exitCode(err, stderr)
		}
		creds.OpenAI = &session.ProviderCredentials{APIKey: key, BaseURL: base}
	default:
		return exitCode(usagef("login: unknown provider %q (anthropic, openai or local)", p), stderr)
	}
	if *model != "" {
		creds.Model = *model
	} else if p == "local" && tty {
		m, err := ask("Model to use, as served (e.g. qwen3-coder; empty for the server's default)", "")
		if err != nil {
			return exitCode(err, stderr)
		}
		if m != "" {
			creds.Model = "openai/" + strings.TrimPrefix(m, "openai/")
		}
	}
	if err := env.SaveCredentials(creds); err != nil {
		return exitCode(fmt.Errorf("login: %w", err), stderr)
	}
	fmt.Fprintf(stderr, "Stored %s in %s (mode 0600).\n", strings.Join(creds.Names(), ", "), dir)
	if env.ModelError() != nil {
		fmt.Fprintf(stderr, "Note: %v\n", env.NoModel())
		return exitError
	}
	return exitOK
}

var errNoKey = errors.New("login: no API key given")

// readKey reads a key: from the terminal with echo off, else the first
// line of stdin.
func readKey(stdin io.Reader, in *bufio.Reader, tty bool, stderr io.Writer, label string) (string, error) {
	var line string
	var err error
	if tty {
		fmt.Fprintf(stderr, "%s (not shown): ", label)
		restore := echoOff(stdin.(*os.File))
		line, err = in.ReadString('\n')
		restore()
		fmt.Fprintln(stderr)
	} else {
		line, err = in.ReadString('\n')
	}
	if err != nil && err != io.EOF {
		return "", err
	}
	key := strings.TrimSpace(line)
	if key == "" {
		return "", errNoKey
	}
	return key, nil
}

// runLogout implements `coding-agent logout`: it removes the stored
// credentials.
func runLogout(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("logout", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dataDir := fs.String("data-dir", "", "data directory")
	if err := fs.Parse(args); err != nil {
		return exitCode(usagef("logout: %v", err), stderr)
	}
	if fs.NArg() > 0 {
		return exitCode(usagef("logout: unexpected argument %q", fs.Arg(0)), stderr)
	}
	dir, err := session.ResolveDataDir(*dataDir)
	if err != nil {
		return exitCode(err, stderr)
	}
	removed, err := (&session.Env{DataDir: dir}).RemoveCredentials()
	if err != nil {
		return exitCode(err, stderr)
	}
	if removed {
		fmt.Fprintf(stderr, "Removed the stored credentials from %s.\n", dir)
	} else {
		fmt.Fprintf(stderr, "No stored credentials in %s.\n", dir)
	}
	return exitOK
}
