package models

import (
	"errors"
	"slices"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSelect(t *testing.T) {
	tests := []struct {
		name      string
		spec      string
		env       map[string]string
		want      string   // model name on success
		wantErr   string   // substring of the error
		noModel   bool     // errors.Is(err, ErrNoModel)
		variables []string // NoModelError.Variables
	}{
		{name: "explicit anthropic", spec: "anthropic/claude-opus-4-1", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "anthropic/claude-opus-4-1"},
		{name: "provider only", spec: "anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "anthropic/claude-sonnet-4-5"},
		{name: "model with slashes", spec: "openai/Qwen/Qwen3-8B", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:8000/v1"}, want: "openai/Qwen/Qwen3-8B"},
		{name: "env spec", env: map[string]string{"CODING_AGENT_MODEL": "openai/gpt-4.1", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, want: "openai/gpt-4.1"},
		{name: "flag spec beats env", spec: "anthropic/claude-haiku-4-5", env: map[string]string{"CODING_AGENT_MODEL": "openai/gpt-4.1", "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, want: "anthropic/claude-haiku-4-5"},
		{name: "only anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "anthropic/claude-sonnet-4-5"},
		{name: "only openai key", env: map[string]string{"OPENAI_API_KEY": "k"}, want: "openai/gpt-5"},
		{name: "only local server", env: map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, want: "openai/gpt-5"},
		{
			name: "nothing", env: map[string]string{},
			wantErr: "no model configured: set ANTHROPIC_API_KEY", noModel: true,
			variables: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODING_AGENT_MODEL"},
		},
		{
			name: "official base URL without key is not a local server", env: map[string]string{"OPENAI_BASE_URL": "https://api.openai.com/v1"},
			wantErr: "no model configured", noModel: true,
			variables: []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODING_AGENT_MODEL"},
		},
		{
			name: "both and no spec", env: map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"},
			wantErr: "choose a model with --model", noModel: true, variables: []string{"CODING_AGENT_MODEL"},
		},
		{
			name: "missing anthropic key", spec: "anthropic/claude-sonnet-4-5", env: map[string]string{"OPENAI_API_KEY": "k"},
			wantErr: "ANTHROPIC_API_KEY is not set", noModel: true, variables: []string{"ANTHROPIC_API_KEY"},
		},
		{
			name: "missing openai key", spec: "openai/gpt-5", env: map[string]string{"ANTHROPIC_API_KEY": "k"},
			wantErr: "OPENAI_API_KEY is not set", noModel: true, variables: []string{"OPENAI_API_KEY", "OPENAI_BASE_URL"},
		},
		{name: "unknown provider", spec: "gemini/gemini-2.5-pro", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, wantErr: `unknown provider "gemini" (known providers: anthropic, openai)`},
		{name: "empty model", spec: "openai/", env: map[string]string{"OPENAI_API_KEY": "k"}, wantErr: `model "openai/": empty model name`},
		{name: "bad base URL", spec: "anthropic", env: map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "api.anthropic.com"}, wantErr: "ANTHROPIC_BASE_URL: invalid URL"},
		{name: "bad openai base URL", spec: "openai/x", env: map[string]string{"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "localhost:11434"}, wantErr: "OPENAI_BASE_URL: invalid URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Select(tc.spec, envOf(tc.env), Options{})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if m.Name() != tc.want {
					t.Errorf("model %q, want %q", m.Name(), tc.want)
				}
				return
			}
			mustContain(t, err, tc.wantErr)
			if got := errors.Is(err, ErrNoModel); got != tc.noModel {
				t.Errorf("errors.Is(err, ErrNoModel) = %v, want %v", got, tc.noModel)
			}
			var nm *NoModelError
			if errors.As(err, &nm) && !slices.Equal(nm.Variables, tc.variables) {
				t.Errorf("variables %v, want %v", nm.Variables, tc.variables)
			}
		})
	}
}

func TestSelectUsesBaseURLs(t *testing.T) {
	m, err := Select("anthropic", envOf(map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if u := m.(*anthropicModel).url; u != "http://127.0.0.1:9/v1/messages" {
		t.Errorf("anthropic url %q", u)
	}
	m, err = Select("openai/llama3", envOf(map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1"}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if om := m.(*openAIModel); om.url != "http://localhost:11434/v1/chat/completions" || om.apiKey != "" {
		t.Errorf("openai url %q key %q", om.url, om.apiKey)
	}
}

func TestConfigured(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{"none", map[string]string{}, nil},
		{"anthropic", map[string]string{"ANTHROPIC_API_KEY": "k"}, []string{"anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "anthropic/claude-haiku-4-5"}},
		{"both", map[string]string{"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}, []string{"anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1", "anthropic/claude-haiku-4-5", "openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-4.1"}},
		{"env model first", map[string]string{"ANTHROPIC_API_KEY": "k", "CODING_AGENT_MODEL": "anthropic/claude-haiku-4-5"}, []string{"anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5", "anthropic/claude-opus-4-1"}},
		{"local server", map[string]string{"OPENAI_BASE_URL": "http://localhost:11434/v1", "CODING_AGENT_MODEL": "openai/qwen3:8b"}, []string{"openai/qwen3:8b"}},
		{"env model without its key", map[string]string{"CODING_AGENT_MODEL": "anthropic/claude-haiku-4-5", "OPENAI_API_KEY": "k"}, []string{"openai/gpt-5", "openai/gpt-5-mini", "openai/gpt-4.1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Configured(envOf(tc.env)); !slices.Equal(got, tc.want) {
				t.Errorf("Configured = %v, want %v", got, tc.want)
			}
		})
	}
}
