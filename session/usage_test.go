package session

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/session/models/modeltest"
)

// redirect sends every request to base, whatever its host: a model built
// for the provider's own endpoint (with its list price) then talks to a
// scripted server.
type redirect struct{ base *url.URL }

func (r redirect) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host = r.base.Scheme, r.base.Host
	return http.DefaultTransport.RoundTrip(req)
}

func redirectedOpts(t *testing.T, srv *modeltest.Server) models.Options {
	u, err := url.Parse(srv.BaseURL)
	if err != nil {
		t.Fatal(err)
	}
	return models.Options{HTTPClient: &http.Client{Transport: redirect{u}}, MaxRetries: -1}
}

func usageUpdates(us []rpc.SessionUpdate) []*rpc.UsageUpdate {
	var out []*rpc.UsageUpdate
	for _, u := range us {
		if u, ok := u.(*rpc.UsageUpdate); ok {
			out = append(out, u)
		}
	}
	return out
}

// TestUsageUpdateAfterEveryRequest: one usage_update per model request;
// used is that request's context (input plus cached, not a running total),
// size the window, cost the session's spending at the list price.
func TestUsageUpdateAfterEveryRequest(t *testing.T) {
	srv := modeltest.NewAnthropicServer(t, modeltest.Script{
		{Steps: []modeltest.Step{modeltest.Tool("toolu_1", "read", `{"path":"a.txt"}`)},
			Usage: modeltest.Usage{InputTokens: 1000, CacheWriteTokens: 4000, OutputTokens: 50}},
		{Steps: []modeltest.Step{modeltest.Text("It says hi.")},
			Usage: modeltest.Usage{InputTokens: 200, CacheReadTokens: 4000, CacheWriteTokens: 1100, OutputTokens: 10}},
	})
	m, err := models.NewAnthropic("claude-sonnet-4-5", "sk-test", "", redirectedOpts(t, srv))
	if err != nil {
		t.Fatal(err)
	}
	s, rec := newTestSession(t, m, Options{})
	if err := os.WriteFile(filepath.Join(s.Cwd(), "a.txt"), []byte("hi\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("read a.txt")}); err != nil {
		t.Fatal(err)
	}
	us := usageUpdates(rec.all())
	if len(us) != 2 {
		t.Fatalf("%d usage updates, want one per request (2)", len(us))
	}
	cost1 := (1000*3.0 + 4000*3.75 + 50*15.0) / 1e6
	cost2 := cost1 + (200*3.0+4000*0.30+1100*3.75+10*15.0)/1e6
	for i, want := range []struct {
		used int64
		cost float64
	}{{5000, cost1}, {5300, cost2}} {
		u := us[i]
		if u.Used != want.used || u.Size != 200_000 || u.Cost == nil || u.Cost.Currency != "USD" || math.Abs(u.Cost.Amount-want.cost) > 1e-12 {
			t.Errorf("usage_update %d = %+v (cost %+v); want used %d size 200000 cost %v USD", i, u, u.Cost, want.used, want.cost)
		}
	}
}

// TestUsageSizeOfCompatibleServers: an OpenAI-compatible model's size is
// never 0: the server's own figure, config.json's, else the default; no
// price is invented for it.
func TestUsageSizeOfCompatibleServers(t *testing.T) {
	script := func() modeltest.Script {
		return modeltest.Script{{Steps: []modeltest.Step{modeltest.Text("ok")}, Usage: modeltest.Usage{InputTokens: 300, CacheReadTokens: 700, OutputTokens: 5}}}
	}
	run := func(t *testing.T, srv *modeltest.Server, model string, config string) *rpc.UsageUpdate {
		t.Helper()
		m, err := models.NewOpenAI(model, "", srv.BaseURL, models.Options{MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		data := t.TempDir()
		if config != "" {
			if err := os.WriteFile(filepath.Join(data, "config.json"), []byte(config), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env := &Env{DataDir: data, Getenv: func(string) string { return "" }}
		rec := &recorder{}
		s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m, OnEvent: rec.add, Tools: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
			t.Fatal(err)
		}
		us := usageUpdates(rec.all())
		if len(us) != 1 {
			t.Fatalf("%d usage updates", len(us))
		}
		return us[0]
	}
	t.Run("server says", func(t *testing.T) {
		srv := modeltest.NewOpenAIServer(t, script())
		srv.ServeModels(map[string]map[string]any{"qwen3": {"max_model_len": 40960}})
		if u := run(t, srv, "qwen3", ""); u.Used != 1000 || u.Size != 40960 || u.Cost != nil {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("config wins", func(t *testing.T) {
		srv := modeltest.NewOpenAIServer(t, script())
		srv.ServeModels(map[string]map[string]any{"qwen3": {"max_model_len": 40960}})
		if u := run(t, srv, "qwen3", `{"models":{"openai/qwen3":{"contextWindow":65536,"maxOutputTokens":4096}}}`); u.Size != 65536 {
			t.Errorf("usage %+v", u)
		}
	})
	t.Run("default", func(t *testing.T) {
		srv := modeltest.NewOpenAIServer(t, script())
		if u := run(t, srv, "mystery", ""); u.Size != models.DefaultContextWindow {
			t.Errorf("usage %+v, want the default size %d", u, models.DefaultContextWindow)
		}
	})
}

func TestConfigModelsRejectsBadEntries(t *testing.T) {
	for _, c := range []string{
		`{"models":{"qwen3":{"contextWindow":1000}}}`,
		`{"models":{"openai/x":{"contextWindow":-1}}}`,
		`{"models":{"openai/x":{"contextWindow":1000,"maxOutputTokens":1000}}}`,
		`{"models":{"openai/x":{"contextWindw":1000}}}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := loadConfig(dir); err == nil {
			t.Errorf("%s: accepted", c)
		}
	}
}

// TestSystemPromptStableAcrossRequests: nothing per request in the system
// prompt, the start of the cached prefix.
func TestSystemPromptStableAcrossRequests(t *testing.T) {
	m := &scriptModel{responses: [][]models.Event{{text("a"), done(models.StopEndTurn)}}}
	env := &Env{DataDir: t.TempDir(), Getenv: func(string) string { return "" }}
	s, err := env.NewSession(Options{Cwd: t.TempDir(), Model: m})
	if err != nil {
		t.Fatal(err)
	}
	s.created = s.created.AddDate(0, 0, -3) // a session started three days ago
	for range 2 {
		if _, err := s.Prompt(context.Background(), []Content{Text("hi")}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	if m.requests[0].System != m.requests[1].System {
		t.Errorf("system prompt changed between requests")
	}
	if want := s.created.Local().Format("2006-01-02"); !strings.Contains(m.requests[0].System, want) {
		t.Errorf("system prompt lacks the session's start date %s", want)
	}
}
