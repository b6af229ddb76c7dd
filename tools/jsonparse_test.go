package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// sameAsStdlib checks that parseJSON accepts exactly what encoding/json
// accepts and yields the same values.
func sameAsStdlib(t *testing.T, data []byte) {
	t.Helper()
	var want any
	werr := json.Unmarshal(data, &want)
	got, gerr := parseJSON(data)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("parseJSON(%q): err %v, encoding/json err %v", data, gerr, werr)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("parseJSON(%q) = %#v, encoding/json %#v", data, got, want)
	}
}

func TestParseJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, ` {"a" : [1, -2.5e3, true, false, null, "x"]} `, `"\u00e9\n\t\"\\\/"`,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83dx"`,
		"\"a\xffb\"", "\"\xc3\"", `0`, `-0`, `1.5`, `1e400`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`{"a":1,}`, `[1,]`, `{"a" 1}`, `{1:2}`, `"a`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"a\tb\"", `tru`, `nul`,
		`{"a":1} x`, ``, `  `, `{"a":{"b":{"c":[[]]}}}`, `{"a":1,"a":2}`,
		strings.Repeat("[", 1001) + strings.Repeat("]", 1001),
	} {
		t.Run(s, func(t *testing.T) {
			if strings.HasPrefix(s, "[[[[") {
				if _, err := parseJSON([]byte(s)); err == nil {
					t.Fatal("nesting beyond maxDepth accepted")
				}
				return
			}
			sameAsStdlib(t, []byte(s))
		})
	}
}

func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"path":"a","content":"l1\nl2\u00e9"}`, `[1,{"x":null}]`, `"\ud83d\ude00"`, "\"\xff\"", `-1.5e-3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.Count(string(data), "[")+strings.Count(string(data), "{") > maxDepth {
			return
		}
		sameAsStdlib(t, data)
	})
}
