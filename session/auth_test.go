package session

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAgentLogin (issue 11 #7): without a model, a prompt answers ACP's
// auth_required (-32000) with the variables to set and the auth methods;
// initialize offers agent methods (and the terminal login to a client that
// can run it); authenticate with an API key stores it (mode 0600, never
// logged) and the same session then prompts; logout removes it.
func TestAgentLogin(t *testing.T) {
	const secret = "sk-ant-test-SECRET-4f1c"
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("Hello.")}}})
	logs := &syncBuffer{}
	dataDir := t.TempDir()
	env := &Env{DataDir: dataDir, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Getenv: func(k string) string {
			if k == "ANTHROPIC_BASE_URL" {
				return srv.BaseURL
			}
			return ""
		}}
	c := startAgent(t, env)

	var init struct {
		AuthMethods []struct {
			ID, Name, Type string
			Args           []string
			Meta           map[string]map[string]any `json:"_meta"`
		}
		AgentCapabilities struct {
			Auth map[string]any
		}
	}
	if err := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"auth": map[string]any{"terminal": true}}}, &init); err != nil {
		t.Fatalf("initialize: %+v", err)
	}
	types := map[string]string{}
	for _, m := range init.AuthMethods {
		types[m.ID] = m.Type
	}
	if types[AuthLogin] != "terminal" || types[AuthAnthropicKey] != "agent" || types[AuthOpenAIKey] != "agent" {
		t.Errorf("authMethods %+v", init.AuthMethods)
	}
	for _, m := range init.AuthMethods {
		if m.ID == AuthLogin && (len(m.Args) != 1 || m.Args[0] != "login") {
			t.Errorf("terminal method args %v, want [login]", m.Args)
		}
		if m.ID == AuthAnthropicKey && m.Meta["api-key"]["provider"] != "anthropic" {
			t.Errorf("api-key method _meta %v", m.Meta)
		}
	}
	if _, ok := init.AgentCapabilities.Auth["logout"]; !ok {
		t.Errorf("agentCapabilities.auth %v lacks logout", init.AgentCapabilities.Auth)
	}

	sid := newSession(t, c, t.TempDir(), nil)
	prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}
	err := c.call("session/prompt", prompt, nil)
	if err == nil || err.Code != -32000 || !strings.Contains(err.Message, "coding-agent login") {
		t.Fatalf("prompt without a model: %+v, want -32000", err)
	}
	var data struct{ Variables, AuthMethods []string }
	json.Unmarshal(err.Data, &data)
	if !strings.Contains(strings.Join(data.Variables, ","), "ANTHROPIC_API_KEY") || len(data.AuthMethods) == 0 {
		t.Errorf("auth_required data %s", err.Data)
	}

	if err := c.call("authenticate", map[string]any{"methodId": AuthAnthropicKey}, nil); err == nil || err.Code != -32602 {
		t.Errorf("authenticate without a key: %+v, want -32602", err)
	}
	if err := c.call("authenticate", map[string]any{"methodId": "nope"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "nope") {
		t.Errorf("unknown method: %+v", err)
	}
	if err := c.call("authenticate", map[string]any{"methodId": AuthAnthropicKey, "_meta": map[string]any{"api-key": map[string]any{"apiKey": secret}}}, nil); err != nil {
		t.Fatalf("authenticate: %+v", err)
	}
	p := filepath.Join(dataDir, CredentialsFile)
	fi, statErr := os.Stat(p)
	if statErr != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file %v mode %v, want 0600", statErr, fi.Mode())
	}
	if b, _ := os.ReadFile(p); !strings.Contains(string(b), secret) {
		t.Errorf("the key is not stored: %s", b)
	}

	var res struct{ StopReason string }
	if err := c.call("session/prompt", prompt, &res); err != nil || res.StopReason != "end_turn" {
		t.Fatalf("prompt after authenticate: %+v %+v", err, res)
	}
	if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Header.Get("X-Api-Key") != secret {
		t.Errorf("the model was not called with the stored key")
	}

	if err := c.call("logout", map[string]any{}, nil); err != nil {
		t.Fatalf("logout: %+v", err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("credentials still there after logout: %v", err)
	}
	sid2 := newSession(t, c, t.TempDir(), nil)
	if err := c.call("session/prompt", map[string]any{"sessionId": sid2, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}, nil); err == nil || err.Code != -32000 {
		t.Errorf("prompt after logout: %+v, want -32000", err)
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the key reached the log:\n%s", logs.String())
	}
}

// TestAgentGatewayAuth: the gateway method stores an OpenAI-compatible
// server's base URL, offered only to a client that asks for gateways.
func TestAgentGatewayAuth(t *testing.T) {
	dataDir := t.TempDir()
	c := startAgent(t, &Env{DataDir: dataDir, Getenv: func(string) string { return "" }})
	var init struct{ AuthMethods []struct{ ID string } }
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &init)
	for _, m := range init.AuthMethods {
		if m.ID == AuthGateway || m.ID == AuthLogin {
			t.Errorf("%s offered to a client that did not ask for it", m.ID)
		}
	}
	c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"auth": map[string]any{"_meta": map[string]any{"gateway": true}}}}, &init)
	found := false
	for _, m := range init.AuthMethods {
		found = found || m.ID == AuthGateway
	}
	if !found {
		t.Fatalf("no gateway method: %+v", init.AuthMethods)
	}
	if err := c.call("authenticate", map[string]any{"methodId": AuthGateway, "_meta": map[string]any{"gateway": map[string]any{"baseUrl": "ftp://x"}}}, nil); err == nil || !strings.Contains(err.Message, "baseUrl") {
		t.Errorf("bad base URL: %+v", err)
	}
	if err := c.call("authenticate", map[string]any{"methodId": AuthGateway, "_meta": map[string]any{"gateway": map[string]any{"baseUrl": "http://127.0.0.1:9/v1"}}}, nil); err != nil {
		t.Fatalf("authenticate gateway: %+v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dataDir, CredentialsFile))
	if !strings.Contains(string(b), "http://127.0.0.1:9/v1") {
		t.Errorf("base URL not stored: %s", b)
	}
}
