package models

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Provider names, the part of a model spec before the first "/".
const (
	ProviderAnthropic = "anthropic"
	ProviderOpenAI    = "openai"
)

// Default models, used when a provider is chosen without a model (spec
// "anthropic" or no spec at all with exactly one provider configured).
const (
	DefaultAnthropicModel = "claude-sonnet-4-5"
	DefaultOpenAIModel    = "gpt-5"
)

// Environment variables read by [Select] and [Configured].
const (
	EnvModel           = "CODING_AGENT_MODEL"
	EnvAnthropicAPIKey = "ANTHROPIC_API_KEY"
	EnvAnthropicBase   = "ANTHROPIC_BASE_URL"
	EnvOpenAIAPIKey    = "OPENAI_API_KEY"
	EnvOpenAIBase      = "OPENAI_BASE_URL"
)

// Options tune the HTTP behaviour of a model. The zero value is ready to use.
type Options struct {
	// HTTPClient sends the requests; nil means http.DefaultClient. It should
	// have no overall Timeout: streams are long, StallTimeout guards them.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed request is retried (429, 408,
	// 5xx, a provider "overloaded" event, a dropped or stalled connection)
	// when no event of the response has been delivered yet. 0 means
	// DefaultMaxRetries; negative means never retry.
	MaxRetries int
	// RetryBase is the first backoff delay, doubled per attempt with
	// jitter; 0 means DefaultRetryBase. A server's Retry-After is scaled by
	// RetryBase/DefaultRetryBase, so tests that shrink RetryBase do not wait
	// for real seconds.
	RetryBase time.Duration
	// StallTimeout aborts a request that receives no bytes for this long;
	// 0 means DefaultStallTimeout.
	StallTimeout time.Duration
	// Logger receives retry notices; nil discards them.
	Logger *slog.Logger
}

// ErrNoModel is matched (errors.Is) by every [*NoModelError]: no usable model
// is configured. The ACP adapter reports it as auth_required (-32000).
var ErrNoModel = errors.New("no model configured")

// NoModelError says which environment variables would configure a model.
type NoModelError struct {
	Msg       string
	Variables []string
}

func (e *NoModelError) Error() string { return e.Msg }

// Is makes errors.Is(err, ErrNoModel) hold.
func (e *NoModelError) Is(target error) bool { return target == ErrNoModel }

// credentialVars lists every variable that can configure a model.
var credentialVars = []string{EnvAnthropicAPIKey, EnvOpenAIAPIKey, EnvOpenAIBase, EnvModel}

// NoModel returns the error for no model configured at all: the one place
// that says what to set (every front end shows this text, and the ACP
// adapter sends Variables with it).
func NoModel() *NoModelError {
	return &NoModelError{
		Msg: fmt.Sprintf("no model configured: set %s for Anthropic, or %s (or %s for a local server) for OpenAI-compatible models, or choose one with --model PROVIDER/MODEL or %s; or run `coding-agent login`",
			EnvAnthropicAPIKey, EnvOpenAIAPIKey, EnvOpenAIBase, EnvModel),
		Variables: append([]string(nil), credentialVars...),
	}
}

// Select returns the model named by spec, "provider/model" (the model part
// may itself contain slashes, as in "openai/Qwen/Qwen3-8B"), or just
// "provider" for its default model. An empty spec falls back to
// CODING_AGENT_MODEL, then to the default model of the only provider with
// credentials (ANTHROPIC_API_KEY; OPENAI_API_KEY or OPENAI_BASE_URL). env
// reads the environment (os.Getenv in production).
//
// With no credentials at all, or credentials for both providers and no spec,
// or a spec whose provider lacks its key, the error is a [*NoModelError]
// naming the variables to set.
func Select(spec string, env func(string) string, opts Options) (Model, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = strings.TrimSpace(env(EnvModel))
	}
	if spec == "" {
		var have []string
		if env(EnvAnthropicAPIKey) != "" {
			have = append(have, ProviderAnthropic)
		}
		if openAIConfigured(env) {
			have = append(have, ProviderOpenAI)
		}
		switch len(have) {
		case 0:
			return nil, NoModel()
		case 2:
			return nil, &NoModelError{
				Msg: fmt.Sprintf("both Anthropic and OpenAI credentials are set: choose a model with --model (or %s), e.g. %s/%s or %s/%s",
					EnvModel, ProviderAnthropic, DefaultAnthropicModel, ProviderOpenAI, DefaultOpenAIModel),
				Variables: []string{EnvModel},
			}
		}
		spec = have[0]
	}

	provider, model, _ := strings.Cut(spec, "/")
	if model == "" && strings.Contains(spec, "/") {
		return nil, fmt.Errorf("model %q: empty model name after %q", spec, provider+"/")
	}
	switch provider {
	case ProviderAnthropic:
		if model == "" {
			model = DefaultAnthropicModel
		}
		key := env(EnvAnthropicAPIKey)
		if key == "" {
			return nil, &NoModelError{
				Msg:       fmt.Sprintf("%s is not set (needed for model %s/%s)", EnvAnthropicAPIKey, provider, model),
				Variables: []string{EnvAnthropicAPIKey},
			}
		}
		base := env(EnvAnthropicBase)
		if err := checkBaseURL(base); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvAnthropicBase, err)
		}
		return NewAnthropic(model, key, base, opts)
	case ProviderOpenAI:
		if model == "" {
			model = DefaultOpenAIModel
		}
		if !openAIConfigured(env) {
			return nil, &NoModelError{
				Msg:       fmt.Sprintf("%s is not set (needed for model %s/%s; for a local server set %s instead)", EnvOpenAIAPIKey, provider, model, EnvOpenAIBase),
				Variables: []string{EnvOpenAIAPIKey, EnvOpenAIBase},
			}
		}
		base := env(EnvOpenAIBase)
		if err := checkBaseURL(base); err != nil {
			return nil, fmt.Errorf("%s: %w", EnvOpenAIBase, err)
		}
		return NewOpenAI(model, env(EnvOpenAIAPIKey), base, opts)
	default:
		return nil, fmt.Errorf("model %q: unknown provider %q (known providers: %s, %s)", spec, provider, ProviderAnthropic, ProviderOpenAI)
	}
}

// openAIConfigured says whether the OpenAI provider can be used: with a key,
// or with a base URL other than OpenAI's own (a local server needs no key).
func openAIConfigured(env func(string) string) bool {
	if env(EnvOpenAIAPIKey) != "" {
		return true
	}
	base := env(EnvOpenAIBase)
	return base != "" && !isOfficialOpenAI(base)
}

// Configured lists the "provider/model" specs usable with the current
// environment: first the model [Select] picks without a spec (from
// CODING_AGENT_MODEL or the only configured provider), then a few current
// models of each provider with credentials. A compatible server at
// OPENAI_BASE_URL serves models this package cannot know, so for it only the
// first entry appears.
func Configured(env func(string) string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if m, err := Select("", env, Options{}); err == nil {
		add(m.Name())
	}
	if env(EnvAnthropicAPIKey) != "" {
		for _, m := range []string{DefaultAnthropicModel, "claude-opus-4-1", "claude-haiku-4-5"} {
			add(ProviderAnthropic + "/" + m)
		}
	}
	if env(EnvOpenAIAPIKey) != "" && (env(EnvOpenAIBase) == "" || isOfficialOpenAI(env(EnvOpenAIBase))) {
		for _, m := range []string{DefaultOpenAIModel, "gpt-5-mini", "gpt-4.1"} {
			add(ProviderOpenAI + "/" + m)
		}
	}
	return out
}

// checkBaseURL accepts "" (the provider's default) or an absolute http(s) URL.
func checkBaseURL(s string) error {
	if s == "" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("invalid URL %q: %w", s, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("invalid URL %q: want http:// or https:// with a host", s)
	}
	return nil
}

// CheckSpec checks the form of a model spec given by a person (a flag):
// "provider", or "provider/model" with a known provider. It does not look
// for credentials; [Select] does.
func CheckSpec(spec string) error {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return errors.New("empty model: give provider/model, e.g. " + ProviderAnthropic + "/" + DefaultAnthropicModel)
	}
	provider, model, found := strings.Cut(spec, "/")
	if found && model == "" {
		return fmt.Errorf("model %q: empty model name after %q", spec, provider+"/")
	}
	if provider != ProviderAnthropic && provider != ProviderOpenAI {
		return fmt.Errorf("model %q: unknown provider %q (known providers: %s, %s)", spec, provider, ProviderAnthropic, ProviderOpenAI)
	}
	return nil
}
