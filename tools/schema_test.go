package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidator(t *testing.T) {
	v := map[string]*validator{
		"read":  newValidator("read", readSchema),
		"edit":  newValidator("edit", editSchema),
		"write": newValidator("write", writeSchema),
		"bash":  newValidator("bash", bashSchema),
	}
	for _, test := range []struct {
		name, tool, args string
		field, rule      string // empty field: valid
	}{
		{"read ok", "read", `{"path":"a","offset":2,"limit":10}`, "", ""},
		{"integral float is an integer", "read", `{"path":"a","offset":2.0}`, "", ""},
		{"empty args", "read", ``, "/path", "required"},
		{"not an object", "read", `[1]`, "/", "got array, want object"},
		{"null", "read", `null`, "/", "got null, want object"},
		{"wrong type", "read", `{"path":3}`, "/path", "got integer, want string"},
		{"fraction", "read", `{"path":"a","offset":1.5}`, "/offset", "got number, want integer"},
		{"minimum", "read", `{"path":"a","limit":0}`, "/limit", "minimum: got 0, want at least 1"},
		{"minLength", "read", `{"path":""}`, "/path", "minLength"},
		{"unknown property", "read", `{"path":"a","lines":3}`, "/lines", `unknown property "lines" (allowed: limit, offset, path)`},
		{"trailing data", "read", `{"path":"a"} {}`, "", "not valid JSON"},
		{"edit ok", "edit", `{"path":"a","edits":[{"oldText":"x","newText":""}]}`, "", ""},
		{"minItems", "edit", `{"path":"a","edits":[]}`, "/edits", "minItems: got 0 items, want at least 1"},
		{"item required", "edit", `{"path":"a","edits":[{"oldText":"x","newText":"y"},{"oldText":"z"}]}`, "/edits/1/newText", "required"},
		{"item unknown property", "edit", `{"path":"a","edits":[{"oldText":"x","newText":"y","all":true}]}`, "/edits/0/all", "unknown property"},
		{"item empty oldText", "edit", `{"path":"a","edits":[{"oldText":"","newText":"y"}]}`, "/edits/0/oldText", "minLength"},
		{"maxLength counts characters", "write", `{"path":"a","content":"","justification":"` + strings.Repeat("é", 240) + `"}`, "", ""},
		{"maxLength", "write", `{"path":"a","content":"","justification":"` + strings.Repeat("é", 241) + `"}`, "/justification", "maxLength: got 241 characters, want at most 240"},
		{"number minimum", "bash", `{"command":"x","timeout":0.001}`, "/timeout", "minimum"},
		{"number ok", "bash", `{"command":"x","timeout":0.5}`, "", ""},
		{"integer is a number", "bash", `{"command":"x","timeout":3}`, "", ""},
		{"enum", "bash", `{"command":"x","sandbox_permissions":"always"}`, "/sandbox_permissions", `want one of ["use_default" "require_escalated"]`},
	} {
		t.Run(test.name, func(t *testing.T) {
			var dst map[string]any
			err := v[test.tool].decode(json.RawMessage(test.args), &dst)
			if test.rule == "" {
				if err != nil {
					t.Fatalf("decode(%s) = %v, want valid", test.args, err)
				}
				return
			}
			ve, ok := err.(*ValidationError)
			if !ok {
				t.Fatalf("decode(%s) = %v, want a *ValidationError", test.args, err)
			}
			if ve.Field != test.field || !strings.Contains(ve.Rule, test.rule) {
				t.Errorf("decode(%s) = field %q rule %q; want %q, %q", test.args, ve.Field, ve.Rule, test.field, test.rule)
			}
		})
	}
}

func TestCompileSchemaRejectsUnknownKeywords(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","patternProperties":{}}`,
		`{"type":"object","properties":{"a":{"type":"string","format":"uri"}}}`,
		`{"type":"tuple"}`,
		`{"type":"array","items":{"type":"string","pattern":"x"}}`,
	} {
		if _, err := compileSchema([]byte(s)); err == nil {
			t.Errorf("compileSchema(%s) accepted a keyword it does not check", s)
		}
	}
}

func FuzzValidatorDecode(f *testing.F) {
	for _, s := range []string{`{"path":"a","edits":[{"oldText":"x","newText":"y"}]}`, `{"edits":[1,{"oldText":null}]}`, `[]`, `{"path":1e400}`} {
		f.Add(s)
	}
	v := newValidator("edit", editSchema)
	f.Fuzz(func(t *testing.T, s string) {
		var dst struct {
			Path  string
			Edits []struct{ OldText, NewText string }
		}
		if err := v.decode(json.RawMessage(s), &dst); err == nil && (dst.Path == "" || len(dst.Edits) == 0) {
			t.Errorf("decode(%q) accepted arguments without path or edits", s)
		}
	})
}

func TestValidatorFillsTheArguments(t *testing.T) {
	type item struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	}
	var dst struct {
		Path    string   `json:"path"`
		Edits   []item   `json:"edits"`
		Offset  int      `json:"offset"`
		Timeout *float64 `json:"timeout"`
		Absent  *float64 `json:"absent"`
		Ignored string   `json:"-"`
	}
	v := newValidator("assign-test", `{"type":"object","properties":{
		"path":{"type":"string"},"edits":{"type":"array","items":{"type":"object"}},
		"offset":{"type":"integer"},"timeout":{"type":"number"}}}`)
	err := v.decode(json.RawMessage(`{"path":"é\n","edits":[{"oldText":"a","newText":"b"}],"offset":3.0,"timeout":0.25}`), &dst)
	if err != nil {
		t.Fatal(err)
	}
	if dst.Path != "é\n" || len(dst.Edits) != 1 || dst.Edits[0] != (item{"a", "b"}) || dst.Offset != 3 || dst.Timeout == nil || *dst.Timeout != 0.25 || dst.Absent != nil {
		t.Errorf("decoded %+v", dst)
	}
	err = v.decode(json.RawMessage(`{"offset":1e300}`), &dst)
	if ve, ok := err.(*ValidationError); !ok || ve.Field != "/offset" {
		t.Errorf("an out-of-range integer: %v", err)
	}
}

// TestLengthRulesCountCharacters checks minLength and maxLength at their
// limits with one- to four-byte characters, where the byte length alone
// cannot decide.
func TestLengthRulesCountCharacters(t *testing.T) {
	v := newValidator("write", writeSchema) // justification: 1..240 characters
	for _, tt := range []struct {
		just string
		ok   bool
	}{
		{strings.Repeat("a", 240), true},
		{strings.Repeat("a", 241), false},
		{strings.Repeat("é", 240), true},  // 480 bytes
		{strings.Repeat("é", 241), false}, // 482 bytes
		{strings.Repeat("😀", 240), true},  // 960 bytes
		{strings.Repeat("😀", 241), false}, // 964 bytes
		{"😀", true},                       // 4 bytes, 1 character
		{"", false},
	} {
		b, _ := json.Marshal(map[string]any{"path": "p", "content": "", "justification": tt.just})
		var a writeArgs
		err := v.decode(b, &a)
		if (err == nil) != tt.ok {
			t.Errorf("%d characters (%d bytes): err = %v, want ok %v", utf8.RuneCountInString(tt.just), len(tt.just), err, tt.ok)
		}
	}
}
