package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestParseACP(t *testing.T) {
	tests := []struct {
		name, in string
		want     []ServerConfig
		err      string
	}{
		{"stdio", `[{"name":"fs","command":"npx","args":["-y","x"],"env":[{"name":"K","value":"v"}]}]`,
			[]ServerConfig{{Name: "fs", Type: Stdio, Command: "npx", Args: []string{"-y", "x"}, Env: []string{"K=v"}}}, ""},
		{"http", `[{"type":"http","name":"web","url":"https://h/mcp","headers":[{"name":"Authorization","value":"Bearer t"}]}]`,
			[]ServerConfig{{Name: "web", Type: HTTP, URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer t"}}}, ""},
		{"sse", `[{"type":"sse","name":"old","url":"http://h/sse","headers":[]}]`,
			[]ServerConfig{{Name: "old", Type: SSE, URL: "http://h/sse"}}, ""},
		{"no name", `[{"command":"x"}]`, nil, "mcpServers[0].name: required"},
		{"no command", `[{"name":"a","args":[]}]`, nil, "mcpServers[0].command: required"},
		{"no url", `[{"type":"http","name":"a"}]`, nil, "mcpServers[0].url: required"},
		{"bad url", `[{"type":"sse","name":"a","url":"ftp://x"}]`, nil, "mcpServers[0].url: must be an absolute http or https URL"},
		{"bad type", `[{"type":"ws","name":"a","url":"http://x"}]`, nil, `mcpServers[0].type: unknown transport "ws"`},
		{"bad env", `[{"name":"a","command":"x","env":[{"name":"A=B","value":""}]}]`, nil, "mcpServers[0].env[0].name"},
		{"duplicate", `[{"name":"a","command":"x"},{"name":"a","command":"y"}]`, nil, `mcpServers[1].name: duplicate server name "a"`},
		{"not an object", `[3]`, nil, "mcpServers[0]:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var raw []json.RawMessage
			if err := json.Unmarshal([]byte(tt.in), &raw); err != nil {
				t.Fatal(err)
			}
			got, err := ParseACP(raw)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	got, err := ParseConfig(json.RawMessage(`{
		"web": {"url": "https://h/mcp", "headers": {"X": "1"}},
		"fs": {"command": "npx", "args": ["-y", "srv"], "env": {"B": "2", "A": "1"}},
		"old": {"type": "sse", "url": "http://h/sse"}
	}`))
	want := []ServerConfig{
		{Name: "fs", Type: Stdio, Command: "npx", Args: []string{"-y", "srv"}, Env: []string{"A=1", "B=2"}},
		{Name: "old", Type: SSE, URL: "http://h/sse"},
		{Name: "web", Type: HTTP, URL: "https://h/mcp", Headers: map[string]string{"X": "1"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		`[]`:                        "mcpServers: must be an object",
		`{"a": {"comand": "x"}}`:    `mcpServers.a: json: unknown field "comand"`,
		`{"a": {"type": "stdio"}}`:  "mcpServers.a.command: required",
		`{"a": {"type": "http"}}`:   "mcpServers.a.url: required",
		`{"a": {"args": ["only"]}}`: "mcpServers.a.command: required",
	} {
		if _, err := ParseConfig(json.RawMessage(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseConfig(%s) = %v, want %q", in, err, msg)
		}
	}
	if got, err := ParseConfig(nil); got != nil || err != nil {
		t.Errorf("ParseConfig(nil) = %v, %v", got, err)
	}
}

func TestMerge(t *testing.T) {
	sess := []ServerConfig{{Name: "a", Command: "from-session"}, {Name: "b", Command: "b"}}
	cfg := []ServerConfig{{Name: "a", Command: "from-config"}, {Name: "c", Command: "c"}}
	got := Merge(sess, cfg)
	var names []string
	for _, c := range got {
		names = append(names, c.Name+"="+c.Command)
	}
	if strings.Join(names, ",") != "a=from-session,b=b,c=c" {
		t.Errorf("Merge = %v", names)
	}
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"PATH=/bin", "HOME=/h", "K=old"}, []string{"K=new", "X=1"})
	if strings.Join(got, " ") != "PATH=/bin HOME=/h K=new X=1" {
		t.Errorf("mergeEnv = %v", got)
	}
}

func TestAssignNames(t *testing.T) {
	long := strings.Repeat("t", 80)
	keys := []toolKey{
		{"fs", "read_file"},
		{"my.server", "get weather!"},
		{"my_server", "get_weather_"}, // the same name once sanitized
		{"gh", long},
		{"gh", long + "2"}, // the same 64-character cut
		{"ünï", "tool"},
	}
	names := assignNames(keys)
	want := map[toolKey]string{
		{"fs", "read_file"}:           "mcp__fs__read_file",
		{"my.server", "get weather!"}: "mcp__my_server__get_weather_",
		{"my_server", "get_weather_"}: "", // hashed
		{"ünï", "tool"}:               "mcp___n___tool",
	}
	seen := map[string]bool{}
	for _, k := range keys {
		n := names[k]
		if len(n) > MaxNameLen || n == "" || strings.Trim(n, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
			t.Errorf("%v: bad name %q", k, n)
		}
		if seen[n] {
			t.Errorf("%v: duplicate name %q", k, n)
		}
		seen[n] = true
		if w, ok := want[k]; ok && w != "" && n != w {
			t.Errorf("%v = %q, want %q", k, n, w)
		}
	}
	if n := names[toolKey{"my_server", "get_weather_"}]; !strings.HasPrefix(n, "mcp__my_server__get_weather__") {
		t.Errorf("collision name = %q", n)
	}
	// The same set in another order gives the same names.
	rev := append([]toolKey(nil), keys...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if again := assignNames(rev); !reflect.DeepEqual(again, names) {
		t.Errorf("names depend on order:\n%v\n%v", names, again)
	}
}

func TestHead(t *testing.T) {
	if s, cut := head("a\nb"); cut || s != "a\nb" {
		t.Errorf("small: %q %v", s, cut)
	}
	many := strings.Repeat("x\n", 2500)
	if s, cut := head(many); !cut || strings.Count(s, "\n") != 1999 {
		t.Errorf("lines: %d %v", strings.Count(s, "\n"), cut)
	}
	one := strings.Repeat("é", 40000) // 80,000 bytes, one line
	if s, cut := head(one); !cut || len(s) > 50*1024 || !strings.HasSuffix(s, "é") {
		t.Errorf("one line: %d bytes, %v", len(s), cut)
	}
}
