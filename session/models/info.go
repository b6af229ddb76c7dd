package models

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Info is what is known of a model's limits and price.
type Info struct {
	// ContextWindow is the most tokens one request may hold, input and
	// output together.
	ContextWindow int64
	// MaxOutputTokens is the most tokens one response may have.
	MaxOutputTokens int64
	// Price is the list price, nil when unknown (local servers, unknown
	// models, base URLs other than the provider's own).
	Price *Price
	// Source says where ContextWindow came from: "config", "server"
	// (what the server reported), "builtin" (this package's table) or
	// "default" (nothing known: DefaultContextWindow).
	Source string
}

// Defaults for models nothing is known about.
const (
	// DefaultContextWindow is assumed for a model that neither this
	// package, the configuration nor its server describes.
	DefaultContextWindow = 128_000
	// DefaultMaxOutputTokens is assumed alongside it.
	DefaultMaxOutputTokens = 8_192
)

// Price is a list price in US dollars per million tokens.
type Price struct {
	Input      float64 // uncached input
	Output     float64
	CacheRead  float64 // input read from the prompt cache
	CacheWrite float64 // input written to the prompt cache
}

// Cost is the price of one request's usage, in US dollars.
func (p *Price) Cost(u Usage) float64 {
	if p == nil {
		return 0
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*p.CacheRead + float64(u.CacheWriteTokens)*p.CacheWrite) / 1e6
}

// Describer is implemented by models that can say what they are. The
// providers of this package implement it; [Describe] falls back to the
// defaults for others.
type Describer interface {
	// Describe returns the model's limits; it may ask the server once
	// (bounded by ctx), and remembers the answer.
	Describe(ctx context.Context) Info
}

// Describe returns what is known of m: its own description if it has one,
// else the defaults.
func Describe(ctx context.Context, m Model) Info {
	if d, ok := m.(Describer); ok {
		return d.Describe(ctx)
	}
	return Info{ContextWindow: DefaultContextWindow, MaxOutputTokens: DefaultMaxOutputTokens, Source: "default"}
}

// known is the built-in table: model name prefix → limits and list price
// (USD per million tokens, as published by the providers in 2025). The
// longest matching prefix wins.
var known = []struct {
	prefix string
	window int64
	output int64
	price  Price
}{
	// Anthropic. Cache writes are the 5-minute ephemeral price (1.25×).
	{"claude-opus-4-5", 200_000, 64_000, Price{5, 25, 0.50, 6.25}},
	{"claude-opus-4-1", 200_000, 32_000, Price{15, 75, 1.50, 18.75}},
	{"claude-opus-4", 200_000, 32_000, Price{15, 75, 1.50, 18.75}},
	{"claude-sonnet-4", 200_000, 64_000, Price{3, 15, 0.30, 3.75}},
	{"claude-haiku-4", 200_000, 64_000, Price{1, 5, 0.10, 1.25}},
	{"claude-3-7-sonnet", 200_000, 64_000, Price{3, 15, 0.30, 3.75}},
	{"claude-3-5-sonnet", 200_000, 8_192, Price{3, 15, 0.30, 3.75}},
	{"claude-3-5-haiku", 200_000, 8_192, Price{0.80, 4, 0.08, 1}},
	{"claude-3-opus", 200_000, 4_096, Price{15, 75, 1.50, 18.75}},
	{"claude-3-haiku", 200_000, 4_096, Price{0.25, 1.25, 0.03, 0.30}},
	{"claude-", 200_000, 32_000, Price{}},
	// OpenAI. Cached input is read at the discounted price; writes cost
	// nothing extra.
	{"gpt-5-nano", 400_000, 128_000, Price{0.05, 0.40, 0.005, 0}},
	{"gpt-5-mini", 400_000, 128_000, Price{0.25, 2, 0.025, 0}},
	{"gpt-5", 400_000, 128_000, Price{1.25, 10, 0.125, 0}},
	{"gpt-4.1-nano", 1_047_576, 32_768, Price{0.10, 0.40, 0.025, 0}},
	{"gpt-4.1-mini", 1_047_576, 32_768, Price{0.40, 1.60, 0.10, 0}},
	{"gpt-4.1", 1_047_576, 32_768, Price{2, 8, 0.50, 0}},
	{"gpt-4o-mini", 128_000, 16_384, Price{0.15, 0.60, 0.075, 0}},
	{"gpt-4o", 128_000, 16_384, Price{2.50, 10, 1.25, 0}},
	{"o4-mini", 200_000, 100_000, Price{1.10, 4.40, 0.275, 0}},
	{"o3-mini", 200_000, 100_000, Price{1.10, 4.40, 0.55, 0}},
	{"o3", 200_000, 100_000, Price{2, 8, 0.50, 0}},
	{"o1", 200_000, 100_000, Price{15, 60, 7.50, 0}},
}

// builtinInfo looks model up in the built-in table; priced says whether
// the list price applies (the provider's own endpoint).
func builtinInfo(model string, priced bool) (Info, bool) {
	m := strings.ToLower(model)
	best := -1
	for i, k := range known {
		if strings.HasPrefix(m, k.prefix) && (best < 0 || len(k.prefix) > len(known[best].prefix)) {
			best = i
		}
	}
	if best < 0 {
		return Info{}, false
	}
	k := known[best]
	info := Info{ContextWindow: k.window, MaxOutputTokens: k.output, Source: "builtin"}
	if priced && k.price != (Price{}) {
		p := k.price
		info.Price = &p
	}
	return info, true
}

// contextWindow returns the context size of well-known models, 0 otherwise.
func contextWindow(model string) int64 {
	info, _ := builtinInfo(model, false)
	return info.ContextWindow
}

// describeOnce remembers a model's description. Asking a server happens
// at most once per model value, successful or not.
type describeOnce struct {
	mu   sync.Mutex
	done bool
	info Info
}

func (d *describeOnce) get(ctx context.Context, f func(context.Context) Info) Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.done {
		d.info = f(ctx)
		d.done = true
	}
	return d.info
}

// probeTimeout bounds each request that asks a local server about its
// model.
const probeTimeout = 3 * time.Second

// maxProbeBody bounds what is read of a server's description.
const maxProbeBody = 4 << 20

// serverContext asks an OpenAI-compatible server at base (ending in /v1 or
// not) how large its context is, in the formats the common local servers
// document:
//
//   - vLLM: GET base/models, the model's "max_model_len";
//   - llama.cpp: GET root/props, "default_generation_settings.n_ctx" (the
//     context the server allocated, which may be smaller than the model's);
//   - Ollama: POST root/api/show {"model"}, "num_ctx" in "parameters" when
//     the model sets one, else "model_info"'s "<arch>.context_length".
//
// root is base without a trailing /v1. It returns 0 when none answers.
func serverContext(ctx context.Context, hc *http.Client, base, apiKey, model string) int64 {
	base = strings.TrimRight(base, "/")
	root := strings.TrimSuffix(base, "/v1")
	get := func(method, url string, body []byte) []byte {
		ctx, cancel := context.WithTimeout(ctx, probeTimeout)
		defer cancel()
		var r io.Reader
		if body != nil {
			r = bytes.NewReader(body)
		}
		req, err := http.NewRequestWithContext(ctx, method, url, r)
		if err != nil {
			return nil
		}
		if apiKey != "" {
			req.Header.Set("Authorization", "Bearer "+apiKey)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := hc.Do(req)
		if err != nil {
			return nil
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
		return b
	}

	if b := get(http.MethodGet, base+"/models", nil); b != nil {
		var list struct {
			Data []struct {
				ID          string `json:"id"`
				MaxModelLen int64  `json:"max_model_len"`
			} `json:"data"`
		}
		if json.Unmarshal(b, &list) == nil {
			for _, m := range list.Data {
				if m.ID == model && m.MaxModelLen > 0 {
					return m.MaxModelLen
				}
			}
		}
	}
	if b := get(http.MethodGet, root+"/props", nil); b != nil {
		var props struct {
			Settings struct {
				NCtx int64 `json:"n_ctx"`
			} `json:"default_generation_settings"`
		}
		if json.Unmarshal(b, &props) == nil && props.Settings.NCtx > 0 {
			return props.Settings.NCtx
		}
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	if b := get(http.MethodPost, root+"/api/show", body); b != nil {
		var show struct {
			Parameters string                     `json:"parameters"`
			ModelInfo  map[string]json.RawMessage `json:"model_info"`
		}
		if json.Unmarshal(b, &show) == nil {
			if n := ollamaNumCtx(show.Parameters); n > 0 {
				return n
			}
			var arch string
			_ = json.Unmarshal(show.ModelInfo["general.architecture"], &arch)
			var n int64
			if arch != "" && json.Unmarshal(show.ModelInfo[arch+".context_length"], &n) == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

// ollamaNumCtx finds "num_ctx N" in the parameters text of /api/show.
func ollamaNumCtx(params string) int64 {
	sc := bufio.NewScanner(strings.NewReader(params))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "num_ctx" {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}
