package session

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/coding-agent/coding-agent/rpc"
	"github.com/coding-agent/coding-agent/session/models"
)

// Auth method ids offered by initialize (PROTOCOL.md §2, §11).
const (
	// AuthLogin is the terminal method: the client runs `coding-agent
	// login` in a terminal.
	AuthLogin = "login"
	// AuthAnthropicKey and AuthOpenAIKey take an API key the way the
	// registry's agents do: authenticate {methodId,
	// _meta: {"api-key": {apiKey}}}.
	AuthAnthropicKey = "anthropic-api-key"
	AuthOpenAIKey    = "openai-api-key"
	// AuthGateway takes an OpenAI-compatible server's base URL:
	// authenticate {methodId, _meta: {gateway: {baseUrl, headers?}}}.
	AuthGateway = "gateway"
)

// authMethod is one entry of initialize's authMethods (ACP v1).
type authMethod struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Type        string            `json:"type,omitempty"`
	Args        []string          `json:"args,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Meta        map[string]any    `json:"_meta,omitempty"`
}

// clientAuth is what a client says of authentication in initialize.
type clientAuth struct {
	terminal bool // auth.terminal, or the legacy _meta["terminal-auth"]
	gateway  bool // auth._meta.gateway
}

func parseClientAuth(c *rpc.ClientCapabilities) clientAuth {
	var ca clientAuth
	if c == nil {
		return ca
	}
	var auth struct {
		Terminal bool `json:"terminal"`
		Meta     struct {
			Gateway bool `json:"gateway"`
		} `json:"_meta"`
	}
	if len(c.Auth) > 0 && json.Unmarshal(c.Auth, &auth) == nil {
		ca.terminal, ca.gateway = auth.Terminal, auth.Meta.Gateway
	}
	var meta map[string]json.RawMessage
	if len(c.Meta) > 0 && json.Unmarshal(c.Meta, &meta) == nil && string(meta["terminal-auth"]) == "true" {
		ca.terminal = true
	}
	return ca
}

// authMethods lists the methods offered to a client: the API-key methods
// always; the terminal login to clients that can run it; the gateway
// method to clients that asked for gateways.
func authMethods(ca clientAuth) []authMethod {
	var out []authMethod
	if ca.terminal {
		m := authMethod{
			ID: AuthLogin, Name: "Log in in a terminal", Type: "terminal",
			Description: "Run `coding-agent login`: choose Anthropic, OpenAI or a local OpenAI-compatible server, and enter the key or the server's URL",
			Args:        []string{"login"},
		}
		if exe, err := os.Executable(); err == nil {
			// The legacy form some clients still read.
			m.Meta = map[string]any{"terminal-auth": map[string]any{"command": exe, "args": []string{"login"}, "label": "coding-agent login"}}
		}
		out = append(out, m)
	}
	out = append(out,
		authMethod{ID: AuthAnthropicKey, Name: "Anthropic API key", Type: "agent",
			Description: "Use an Anthropic API key (stored in the data directory, mode 0600)",
			Meta:        map[string]any{"api-key": map[string]any{"provider": models.ProviderAnthropic}}},
		authMethod{ID: AuthOpenAIKey, Name: "OpenAI API key", Type: "agent",
			Description: "Use an OpenAI API key (stored in the data directory, mode 0600)",
			Meta:        map[string]any{"api-key": map[string]any{"provider": models.ProviderOpenAI}}},
	)
	if ca.gateway {
		out = append(out, authMethod{ID: AuthGateway, Name: "OpenAI-compatible server", Type: "agent",
			Description: "A local or hosted server with the OpenAI Chat Completions API (Ollama, vLLM, llama.cpp, LM Studio)",
			Meta:        map[string]any{"gateway": map[string]any{"protocol": "openai", "restartRequired": "false"}}})
	}
	return out
}

func authMethodsJSON(ms []authMethod) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(ms))
	for _, m := range ms {
		b, _ := json.Marshal(m)
		out = append(out, b)
	}
	return out
}

func authMethodIDs(ms []authMethod) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// authMeta is the _meta of an authenticate request.
type authMeta struct {
	APIKey  json.RawMessage `json:"api-key"`
	Gateway *struct {
		BaseURL string            `json:"baseUrl"`
		Headers map[string]string `json:"headers"`
	} `json:"gateway"`
}

// apiKey returns _meta["api-key"].apiKey, or _meta["api-key"] when it is a
// plain string (both forms are in use).
func (m authMeta) apiKey() string {
	var s string
	if json.Unmarshal(m.APIKey, &s) == nil {
		return strings.TrimSpace(s)
	}
	var o struct {
		APIKey string `json:"apiKey"`
	}
	if json.Unmarshal(m.APIKey, &o) == nil {
		return strings.TrimSpace(o.APIKey)
	}
	return ""
}

// Authenticate answers authenticate (PROTOCOL.md §11): it stores the key or
// the server URL the method takes, then checks that a model is now
// configured. The key is never logged.
func (a *Agent) Authenticate(ctx context.Context, req *rpc.AuthenticateRequest) (*rpc.AuthenticateResponse, error) {
	var meta authMeta
	if len(req.Meta) > 0 {
		if err := json.Unmarshal(req.Meta, &meta); err != nil {
			return nil, rpc.InvalidParams("_meta", "not an object of the expected shape")
		}
	}
	creds, err := a.env.LoadCredentials()
	if err != nil {
		return nil, err
	}
	switch req.MethodID {
	case AuthLogin:
		// The client ran `coding-agent login` in a terminal; nothing to store.
	case AuthAnthropicKey, AuthOpenAIKey:
		envVar, p := models.EnvAnthropicAPIKey, &creds.Anthropic
		if req.MethodID == AuthOpenAIKey {
			envVar, p = models.EnvOpenAIAPIKey, &creds.OpenAI
		}
		key := meta.apiKey()
		if key == "" && a.env.getenv(envVar) == "" {
			return nil, rpc.InvalidParams(`_meta["api-key"].apiKey`, "required: the API key (or set "+envVar+")")
		}
		if key != "" {
			if *p == nil {
				*p = &ProviderCredentials{}
			}
			(*p).APIKey = key
		}
	case AuthGateway:
		if meta.Gateway == nil || meta.Gateway.BaseURL == "" {
			return nil, rpc.InvalidParams("_meta.gateway.baseUrl", "required: the server's base URL, e.g. http://localhost:11434/v1")
		}
		if creds.OpenAI == nil {
			creds.OpenAI = &ProviderCredentials{}
		}
		creds.OpenAI.BaseURL = meta.Gateway.BaseURL
		for k, v := range meta.Gateway.Headers {
			if strings.EqualFold(k, "Authorization") {
				creds.OpenAI.APIKey = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), "Bearer "))
			}
		}
	default:
		return nil, rpc.InvalidParams("methodId", fmt.Sprintf("unknown auth method %q; this agent offers %s", req.MethodID,
			strings.Join(authMethodIDs(authMethods(clientAuth{terminal: true, gateway: true})), ", ")))
	}
	if req.MethodID != AuthLogin {
		if err := a.env.SaveCredentials(creds); err != nil {
			return nil, rpc.InvalidParams("_meta", err.Error())
		}
		a.env.Logger.Info("credentials stored", "method", req.MethodID, "names", creds.Names())
	}
	if a.env.defaultModel() == nil {
		nm := a.env.NoModel()
		return nil, rpc.AuthRequired(nm.Msg, nm.Variables, authMethodIDs(a.authMethods()))
	}
	return &rpc.AuthenticateResponse{}, nil
}

// Logout answers logout: it removes the stored credentials. Sessions keep
// the model they have; new sessions and sessions without one need a login
// (or the environment variables) again.
func (a *Agent) Logout(ctx context.Context, req *rpc.LogoutRequest) (*rpc.LogoutResponse, error) {
	if _, err := a.env.RemoveCredentials(); err != nil {
		return nil, err
	}
	return &rpc.LogoutResponse{}, nil
}

// authMethods are the methods offered to this connection's client.
func (a *Agent) authMethods() []authMethod {
	a.mu.Lock()
	defer a.mu.Unlock()
	return authMethods(a.clientAuth)
}

// noModelError is the answer to a prompt without a model: ACP's
// auth_required, with the variables to set and the auth methods.
func (a *Agent) noModelError() error {
	nm := a.env.NoModel()
	return rpc.AuthRequired(nm.Msg, nm.Variables, authMethodIDs(a.authMethods()))
}
