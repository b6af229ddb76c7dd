package tools

import (
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"
)

func TestPartialFields(t *testing.T) {
	for _, test := range []struct {
		name, src string
		want      map[string]string
	}{
		{"empty", ``, map[string]string{}},
		{"open brace", `{`, map[string]string{}},
		{"key cut", `{"comm`, map[string]string{}},
		{"value open", `{"command":"go te`, map[string]string{"command": "go te"}},
		{"complete", `{"command":"ls","timeout":5}`, map[string]string{"command": "ls"}},
		{"escape cut", `{"command":"echo \`, map[string]string{"command": "echo "}},
		{"escape done", `{"command":"a\nb\"c"}`, map[string]string{"command": "a\nb\"c"}},
		{"unicode escape cut", `{"path":"caf\u00`, map[string]string{"path": "caf"}},
		{"unicode escape", `{"path":"caf\u00e9"}`, map[string]string{"path": "café"}},
		{"surrogate pair", `{"p":"\ud83d\ude00"}`, map[string]string{"p": "😀"}},
		{"surrogate cut", `{"p":"x\ud83d\ude`, map[string]string{"p": "x"}},
		{"utf8 cut", "{\"p\":\"caf\xc3", map[string]string{"p": "caf"}},
		{"after object value", `{"edits":[{"oldText":"a"}],"path":"x.go"}`, map[string]string{"path": "x.go"}},
		{"array value cut", `{"path":"a.go","edits":[{"oldText":"a`, map[string]string{"path": "a.go"}},
		{"not an object", `["x"]`, map[string]string{}},
		{"whitespace", " {\n \"path\" : \"a\" , \"x\": true }", map[string]string{"path": "a"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			got := partialFields(test.src)
			if len(got) != len(test.want) {
				t.Fatalf("partialFields(%q) = %q, want %q", test.src, got, test.want)
			}
			// Fed one byte at a time, the parser ends in the same place.
			p := newPartialObject(nil, 0)
			for i := range len(test.src) {
				p.feed(test.src[i : i+1])
			}
			if fmt.Sprint(p.fields) != fmt.Sprint(got) {
				t.Errorf("byte by byte: %q, at once: %q", p.fields, got)
			}
			for k, v := range test.want {
				if got[k] != v {
					t.Errorf("partialFields(%q)[%q] = %q, want %q", test.src, k, got[k], v)
				}
			}
		})
	}
}

// TestPartialFieldsPrefixes checks every prefix of real arguments: the
// value seen is always a prefix of the final value.
func TestPartialFieldsPrefixes(t *testing.T) {
	full := `{"command":"printf 'h\u00e9llo \"w\"\n' | grep -c 😀 && echo \\done","timeout":3}`
	var want struct{ Command string }
	if err := json.Unmarshal([]byte(full), &want); err != nil {
		t.Fatal(err)
	}
	for i := range len(full) + 1 {
		got := partialFields(full[:i])["command"]
		if len(got) > len(want.Command) || want.Command[:len(got)] != got {
			t.Fatalf("prefix %d %q: command %q is not a prefix of %q", i, full[:i], got, want.Command)
		}
	}
	if got := partialFields(full)["command"]; got != want.Command {
		t.Errorf("full: %q, want %q", got, want.Command)
	}
}

func FuzzPartialFields(f *testing.F) {
	for _, s := range []string{`{"command":"ls`, `{"path":"\u00e9"}`, `{"a":[{"b":"c"}],"p":"x`, "{\"p\":\"\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// However the text is cut into pieces, the result is the same.
		whole := partialFields(s)
		for _, n := range []int{1, 2, 3, 7} {
			p := newPartialObject(nil, 0)
			for i := 0; i < len(s); i += n {
				p.feed(s[i:min(i+n, len(s))])
			}
			if fmt.Sprint(p.fields) != fmt.Sprint(whole) {
				t.Fatalf("in pieces of %d: %q, at once: %q", n, p.fields, whole)
			}
		}
		for k, v := range partialFields(s) {
			if utf8.ValidString(s) && !utf8.ValidString(v) {
				t.Errorf("key %q: invalid UTF-8 value %q from valid input", k, v)
			}
		}
		// A complete object must agree with encoding/json on string members.
		var m map[string]any
		if json.Unmarshal([]byte(s), &m) == nil {
			got := partialFields(s)
			for k, v := range m {
				if sv, ok := v.(string); ok && utf8.ValidString(s) && got[k] != sv {
					t.Errorf("key %q: %q, encoding/json says %q", k, got[k], sv)
				}
			}
		}
	})
}

func TestPartialInput(t *testing.T) {
	args := `{"path": "a<b.txt", "content": "x\ny", "n": 3, "command":"ls`
	for _, step := range []int{1, 3, 16, len(args)} {
		in := NewPartialInput()
		if got := string(in.JSON()); got != `{}` {
			t.Fatalf("before any input: %s", got)
		}
		grew := 0
		for i := 0; i < len(args); i += step {
			if in.Feed(args[i:min(i+step, len(args))]) {
				grew++
			}
		}
		want := `{"path":"a<b.txt","content":"x\ny","command":"ls"}`
		if got := string(in.JSON()); got != want {
			t.Errorf("step %d: JSON = %s, want %s", step, got, want)
		}
		if grew == 0 || grew > 3 {
			t.Errorf("step %d: Feed reported %d new members, want 1..3", step, grew)
		}
	}
}
