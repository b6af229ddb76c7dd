package modeltest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func post(t *testing.T, url, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestAnthropicServerRejectsWhatTheAPIRejects(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"no model", `{"max_tokens":1,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "model: Field required"},
		{"no max_tokens", `{"model":"m","stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "max_tokens"},
		{"empty text", `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":""}]}]}`, "text content blocks must be non-empty"},
		{"assistant first", `{"model":"m","max_tokens":1,"stream":true,"messages":[{"role":"assistant","content":[{"type":"text","text":"x"}]}]}`, "first message"},
		{"unanswered tool_use", `{"model":"m","max_tokens":1,"stream":true,"messages":[
			{"role":"user","content":[{"type":"text","text":"hi"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},
			{"role":"user","content":[{"type":"text","text":"next"}]}]}`, "without `tool_result` blocks"},
		{"result for unknown call", `{"model":"m","max_tokens":1,"stream":true,"messages":[
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}]}`, "unexpected `tool_use_id`"},
		{"result after text", `{"model":"m","max_tokens":1,"stream":true,"messages":[
			{"role":"user","content":[{"type":"text","text":"hi"}]},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{}}]},
			{"role":"user","content":[{"type":"text","text":"x"},{"type":"tool_result","tool_use_id":"t1"}]}]}`, "must come first"},
		{"unsigned thinking", `{"model":"m","max_tokens":1,"stream":true,"messages":[
			{"role":"user","content":[{"type":"text","text":"hi"}]},
			{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"text","text":"y"}]},
			{"role":"user","content":[{"type":"text","text":"z"}]}]}`, "signature"},
		{"tool schema", `{"model":"m","max_tokens":1,"stream":true,"tools":[{"name":"x","input_schema":{"type":"string"}}],"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, "input_schema.type"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewAnthropicServer(t, Script{{Steps: []Step{Text("unreachable")}}})
			status, body := post(t, srv.BaseURL+"/v1/messages", tc.body)
			if status != 400 || !strings.Contains(body, tc.want) || !strings.Contains(body, `"type":"invalid_request_error"`) {
				t.Errorf("status %d body %s; want 400 mentioning %q", status, body, tc.want)
			}
		})
	}
}

func TestOpenAIServerRejectsWhatTheAPIRejects(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"no model", `{"stream":true,"messages":[{"role":"user","content":"hi"}]}`, "model parameter"},
		{"no messages", `{"model":"m","stream":true,"messages":[]}`, "at least one message"},
		{"orphan tool message", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "must be a response to a preceeding message"},
		{"unanswered call", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{}"}}]},
			{"role":"user","content":"next"}]}`, "did not have response messages"},
		{"bad arguments", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{"}}]},
			{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "JSON arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := NewOpenAIServer(t, Script{{Steps: []Step{Text("unreachable")}}})
			status, body := post(t, srv.BaseURL+"/chat/completions", tc.body)
			if status != 400 || !strings.Contains(body, tc.want) {
				t.Errorf("status %d body %s; want 400 mentioning %q", status, body, tc.want)
			}
		})
	}
}

// TestOpenAIServerWireFormat checks the stream against the documented
// chunk shapes: a role chunk, deltas, a finish chunk, a usage chunk with
// empty choices, and the [DONE] sentinel.
func TestOpenAIServerWireFormat(t *testing.T) {
	srv := NewOpenAIServer(t, Script{{
		Steps: []Step{Text("hi"), Tool("call_1", "read", `{"path":`, `"a"}`)},
		Usage: Usage{InputTokens: 3, OutputTokens: 4},
	}})
	status, body := post(t, srv.BaseURL+"/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	if lines[len(lines)-1] != "data: [DONE]" {
		t.Errorf("last line %q", lines[len(lines)-1])
	}
	var finish, usage map[string]any
	_ = json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-3], "data: ")), &finish)
	_ = json.Unmarshal([]byte(strings.TrimPrefix(lines[len(lines)-2], "data: ")), &usage)
	if fr := finish["choices"].([]any)[0].(map[string]any)["finish_reason"]; fr != "tool_calls" {
		t.Errorf("finish_reason %v", fr)
	}
	if len(usage["choices"].([]any)) != 0 || usage["usage"].(map[string]any)["total_tokens"] != 7.0 {
		t.Errorf("usage chunk %v", usage)
	}
	if !strings.Contains(body, `"tool_calls":[{"function":{"arguments":"","name":"read"},"id":"call_1","index":0,"type":"function"}]`) {
		t.Errorf("tool call start chunk missing:\n%s", body)
	}
}

func TestAnthropicServerWireFormat(t *testing.T) {
	srv := NewAnthropicServer(t, Script{{Steps: []Step{Thinking("hm"), {Signature: "sig"}, Text("hi"), Tool("toolu_1", "read", `{}`)}}})
	status, body := post(t, srv.BaseURL+"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	var names []string
	for _, l := range strings.Split(body, "\n") {
		if n, ok := strings.CutPrefix(l, "event: "); ok {
			names = append(names, n)
		}
	}
	want := "message_start ping " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"message_delta message_stop"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("events:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(body, `"delta":{"signature":"sig","type":"signature_delta"}`) || !strings.Contains(body, `"stop_reason":"tool_use"`) {
		t.Errorf("body:\n%s", body)
	}
}

func TestRequestsAndRemaining(t *testing.T) {
	srv := NewAnthropicServer(t, Script{{Status: 529, ErrorType: "overloaded_error", ErrorMessage: "Overloaded"}, {}})
	status, body := post(t, srv.BaseURL+"/v1/messages", `{}`)
	if status != 529 || !strings.Contains(body, `{"error":{"message":"Overloaded","type":"overloaded_error"},"type":"error"}`) {
		t.Errorf("status %d body %s", status, body)
	}
	if r := srv.Requests(); len(r) != 1 || r[0].Path != "/v1/messages" || string(r[0].Body) != "{}" {
		t.Errorf("requests %+v", r)
	}
	if srv.Remaining() != 1 {
		t.Errorf("remaining %d", srv.Remaining())
	}
}

func TestLoadScript(t *testing.T) {
	path := filepath.Join(t.TempDir(), "script.json")
	src := `[
		{"status": 429, "header": {"Retry-After": "1"}, "errorMessage": "slow down"},
		{"steps": [{"text": "hi"}, {"tool": {"id": "c1", "name": "read", "chunks": ["{\"path\":", "\"a\"}"]}}], "usage": {"inputTokens": 5}}
	]`
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || s[0].Status != 429 || s[0].Header["Retry-After"] != "1" || s[1].Steps[1].Tool.Chunks[1] != `"a"}` || s[1].Usage.InputTokens != 5 {
		t.Errorf("script %+v", s)
	}
	if err := os.WriteFile(path, []byte(`[{"steps": 3}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadScript(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("bad script error %v should name the file", err)
	}
}
