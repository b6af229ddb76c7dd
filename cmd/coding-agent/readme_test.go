package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var fence = regexp.MustCompile("(?s)```(json|lua|elisp)\n(.*?)```")

// TestREADMEEditorSnippets checks the editor snippets of the README as far
// as this machine can: the JSON ones parse and start `coding-agent serve`,
// the Lua ones compile (luac), the Emacs Lisp ones are balanced and start
// it too.
func TestREADMEEditorSnippets(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(b), "## Install and editor setup")
	if start < 0 {
		t.Fatal("README has no editor setup section")
	}
	section := string(b)[start:]
	section = section[:strings.Index(section, "\n## ")+1]
	counts := map[string]int{}
	for _, m := range fence.FindAllStringSubmatch(section, -1) {
		lang, code := m[1], m[2]
		counts[lang]++
		switch lang {
		case "json":
			var v struct {
				AgentServers map[string]struct {
					Command string
					Args    []string
				} `json:"agent_servers"`
			}
			if err := json.Unmarshal([]byte(code), &v); err != nil {
				t.Errorf("JSON snippet: %v\n%s", err, code)
			}
			s, ok := v.AgentServers["coding-agent"]
			if !ok || filepath.Base(s.Command) != "coding-agent" || len(s.Args) != 1 || s.Args[0] != "serve" {
				t.Errorf("JSON snippet does not start coding-agent serve:\n%s", code)
			}
		case "lua":
			luac := ""
			for _, name := range []string{"luac5.4", "luac"} {
				if p, err := exec.LookPath(name); err == nil {
					luac = p
					break
				}
			}
			if luac == "" {
				if os.Getenv("CI") == "true" {
					t.Fatal("luac is not installed (.ci/run installs lua5.4)")
				}
				t.Log("no luac here: Lua snippets not compiled")
				continue
			}
			f := filepath.Join(t.TempDir(), "snippet.lua")
			os.WriteFile(f, []byte(code), 0o644)
			if out, err := exec.Command(luac, "-p", f).CombinedOutput(); err != nil {
				t.Errorf("Lua snippet does not compile: %v %s\n%s", err, out, code)
			}
			if !strings.Contains(code, `"coding-agent"`) || !strings.Contains(code, `"serve"`) {
				t.Errorf("Lua snippet does not start coding-agent serve:\n%s", code)
			}
		case "elisp":
			depth, inString := 0, false
			for i := 0; i < len(code); i++ {
				switch c := code[i]; {
				case inString && c == '\\':
					i++
				case c == '"':
					inString = !inString
				case !inString && c == '(':
					depth++
				case !inString && c == ')':
					depth--
					if depth < 0 {
						t.Errorf("Emacs Lisp snippet closes too early:\n%s", code)
					}
				}
			}
			if depth != 0 || inString {
				t.Errorf("Emacs Lisp snippet is not balanced (depth %d):\n%s", depth, code)
			}
			if !strings.Contains(code, `:command "coding-agent"`) || !strings.Contains(code, `'("serve")`) {
				t.Errorf("Emacs Lisp snippet does not start coding-agent serve:\n%s", code)
			}
		}
	}
	if counts["json"] != 2 || counts["lua"] != 2 || counts["elisp"] != 1 {
		t.Errorf("snippets found: %v, want 2 JSON (Zed, JetBrains), 2 Lua (CodeCompanion, avante), 1 Emacs Lisp", counts)
	}
}
