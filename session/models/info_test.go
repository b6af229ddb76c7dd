package models

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

func TestUsageCountsCachedTokensBothProviders(t *testing.T) {
	u := modeltest.Usage{InputTokens: 100, CacheReadTokens: 5000, CacheWriteTokens: 300, OutputTokens: 42}
	t.Run("anthropic", func(t *testing.T) {
		srv := modeltest.NewAnthropicServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("hi")}, Usage: u}})
		m := newAnthropicModel(t, srv, fastOpts())
		r, on := collect(t)
		if err := m.Stream(context.Background(), sampleRequest(), on); err != nil {
			t.Fatal(err)
		}
		want := Usage{InputTokens: 100, CacheReadTokens: 5000, CacheWriteTokens: 300, OutputTokens: 42}
		if r.usage != want {
			t.Errorf("usage %+v, want %+v", r.usage, want)
		}
		if r.usage.Context() != 5400 {
			t.Errorf("context %d, want input plus cached = 5400", r.usage.Context())
		}
	})
	t.Run("openai", func(t *testing.T) {
		// Chat Completions has no cache writes; prompt_tokens includes the
		// cached tokens, which are split out.
		u := u
		u.CacheWriteTokens = 0
		srv := modeltest.NewOpenAIServer(t, modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("hi")}, Usage: u}})
		m, err := NewOpenAI("gpt-5", "sk-test", srv.BaseURL, fastOpts())
		if err != nil {
			t.Fatal(err)
		}
		r, on := collect(t)
		if err := m.Stream(context.Background(), sampleRequest(), on); err != nil {
			t.Fatal(err)
		}
		want := Usage{InputTokens: 100, CacheReadTokens: 5000, OutputTokens: 42}
		if r.usage != want {
			t.Errorf("usage %+v, want %+v", r.usage, want)
		}
	})
}

func TestDescribeBuiltinAndPrices(t *testing.T) {
	tests := []struct {
		name           string
		model          func() (Model, error)
		window, output int64
		priced         bool
		source         string
	}{
		{"claude official", func() (Model, error) { return NewAnthropic("claude-sonnet-4-5", "k", "", Options{}) }, 200_000, 64_000, true, "builtin"},
		{"claude proxy", func() (Model, error) { return NewAnthropic("claude-opus-4-1", "k", "http://127.0.0.1:1", Options{}) }, 200_000, 32_000, false, "builtin"},
		{"unknown claude", func() (Model, error) { return NewAnthropic("my-model", "k", "", Options{}) }, 200_000, 32_000, false, "default"},
		{"gpt-5 official", func() (Model, error) { return NewOpenAI("gpt-5", "k", "", Options{}) }, 400_000, 128_000, true, "builtin"},
		{"gpt-5-mini", func() (Model, error) { return NewOpenAI("gpt-5-mini", "k", "", Options{}) }, 400_000, 128_000, true, "builtin"},
		{"gpt-4.1", func() (Model, error) { return NewOpenAI("gpt-4.1", "k", "", Options{}) }, 1_047_576, 32_768, true, "builtin"},
		{"unknown official", func() (Model, error) { return NewOpenAI("ft:custom", "k", "", Options{}) }, DefaultContextWindow, DefaultMaxOutputTokens, false, "default"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.model()
			if err != nil {
				t.Fatal(err)
			}
			info := Describe(context.Background(), m)
			if info.ContextWindow != tc.window || info.MaxOutputTokens != tc.output || (info.Price != nil) != tc.priced || info.Source != tc.source {
				t.Errorf("info %+v; want window %d output %d priced %v source %s", info, tc.window, tc.output, tc.priced, tc.source)
			}
		})
	}
}

func TestPriceCost(t *testing.T) {
	info, _ := builtinInfo("claude-sonnet-4-5", true)
	got := info.Price.Cost(Usage{InputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000, OutputTokens: 1_000_000})
	if want := 3 + 0.30 + 3.75 + 15.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("cost %v, want %v", got, want)
	}
	var none *Price
	if none.Cost(Usage{InputTokens: 5}) != 0 {
		t.Error("an unknown price costs nothing")
	}
}

// TestDescribeAsksLocalServers serves each local server's documented
// description format and checks the window read from it.
func TestDescribeAsksLocalServers(t *testing.T) {
	t.Run("vllm", func(t *testing.T) {
		srv := modeltest.NewOpenAIServer(t, nil)
		srv.ServeModels(map[string]map[string]any{
			"Qwen/Qwen3-8B": {"max_model_len": 32768},
			"other":         {"max_model_len": 4096},
		})
		m, err := NewOpenAI("Qwen/Qwen3-8B", "", srv.BaseURL, fastOpts())
		if err != nil {
			t.Fatal(err)
		}
		info := Describe(context.Background(), m)
		if info.ContextWindow != 32768 || info.Source != "server" || info.Price != nil || info.MaxOutputTokens != 8192 {
			t.Errorf("info %+v", info)
		}
	})
	serve := func(t *testing.T, h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL + "/v1"
	}
	t.Run("llama.cpp", func(t *testing.T) {
		base := serve(t, func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/v1/models":
				// llama.cpp lists its model without max_model_len.
				_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"qwen","object":"model","meta":{"n_ctx_train":40960}}]}`))
			case "/props":
				_, _ = w.Write([]byte(`{"default_generation_settings":{"n_ctx":16384,"params":{}},"total_slots":1,"model_alias":"qwen"}`))
			default:
				http.NotFound(w, r)
			}
		})
		m, _ := NewOpenAI("qwen", "", base, fastOpts())
		if info := Describe(context.Background(), m); info.ContextWindow != 16384 || info.MaxOutputTokens != 4096 || info.Source != "server" {
			t.Errorf("info %+v", info)
		}
	})
	t.Run("ollama", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			show string
			want int64
		}{
			{"num_ctx", `{"parameters":"stop \"<|im_end|>\"\nnum_ctx 65536\ntemperature 0.7","model_info":{"general.architecture":"qwen3","qwen3.context_length":262144}}`, 65536},
			{"context_length", `{"parameters":"temperature 0.7","model_info":{"general.architecture":"qwen3","qwen3.context_length":262144}}`, 262144},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var asked string
				base := serve(t, func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost && r.URL.Path == "/api/show" {
						var req struct {
							Model string `json:"model"`
						}
						_ = json.NewDecoder(r.Body).Decode(&req)
						asked = req.Model
						_, _ = w.Write([]byte(tc.show))
						return
					}
					http.NotFound(w, r)
				})
				m, _ := NewOpenAI("qwen3-coder:30b", "", base, fastOpts())
				if info := Describe(context.Background(), m); info.ContextWindow != tc.want || info.Source != "server" {
					t.Errorf("info %+v, want window %d", info, tc.want)
				}
				if asked != "qwen3-coder:30b" {
					t.Errorf("asked /api/show about %q", asked)
				}
			})
		}
	})
	t.Run("silent server", func(t *testing.T) {
		n := 0
		base := serve(t, func(w http.ResponseWriter, r *http.Request) { n++; http.NotFound(w, r) })
		m, _ := NewOpenAI("gpt-5", "", base, fastOpts())
		info := Describe(context.Background(), m)
		// The table still knows the name; a local server gets no price.
		if info.ContextWindow != 400_000 || info.Price != nil || info.Source != "builtin" {
			t.Errorf("info %+v", info)
		}
		asked := n
		Describe(context.Background(), m)
		if n != asked {
			t.Errorf("the server was asked again (%d requests, then %d)", asked, n)
		}
		m2, _ := NewOpenAI("local-model", "", base, fastOpts())
		if info := Describe(context.Background(), m2); info.ContextWindow != DefaultContextWindow || info.Source != "default" {
			t.Errorf("unknown model: %+v", info)
		}
	})
}
