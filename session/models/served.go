package models

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"
)

// listTimeout bounds the request for a server's model list.
const listTimeout = time.Second

// ServedModels asks an OpenAI-compatible server at base (OPENAI_BASE_URL)
// which models it serves (GET base/models, as llama.cpp, vLLM, Ollama and
// LM Studio answer) and returns them as "openai/<id>", sorted. It returns
// nil when the server does not answer in time or answers something else:
// the caller then offers what is configured only.
func ServedModels(ctx context.Context, hc *http.Client, base, apiKey string) []string {
	if base == "" {
		return nil
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base, "/")+"/models", nil)
	if err != nil {
		return nil
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxProbeBody)).Decode(&list); err != nil {
		return nil
	}
	var out []string
	for _, m := range list.Data {
		if id := strings.TrimSpace(m.ID); id != "" && len(out) < 200 {
			out = append(out, ProviderOpenAI+"/"+id)
		}
	}
	sort.Strings(out)
	return out
}
