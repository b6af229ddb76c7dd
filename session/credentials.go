package session

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/coding-agent/coding-agent/session/models"
)

// CredentialsFile is the name, in the data directory, of the credentials
// stored by `coding-agent login` and by ACP authenticate. It is written
// with mode 0600 and never logged. Its values act as the environment
// variables of the same meaning when those are not set; they are never
// put in any process's environment, so no command sees them there.
const CredentialsFile = "credentials.json"

// Credentials are the stored model credentials.
type Credentials struct {
	// Anthropic and OpenAI hold a provider's key and base URL.
	Anthropic *ProviderCredentials `json:"anthropic,omitempty"`
	OpenAI    *ProviderCredentials `json:"openai,omitempty"`
	// Model is the default model as provider/model, if one was chosen.
	Model string `json:"model,omitempty"`
}

// ProviderCredentials are one provider's key and base URL.
type ProviderCredentials struct {
	APIKey  string `json:"apiKey,omitempty"`
	BaseURL string `json:"baseUrl,omitempty"`
}

// Empty reports whether c holds nothing.
func (c Credentials) Empty() bool {
	return c.Model == "" && c.Anthropic.empty() && c.OpenAI.empty()
}

func (p *ProviderCredentials) empty() bool { return p == nil || (p.APIKey == "" && p.BaseURL == "") }

// lookup returns the stored value that stands for environment variable k.
func (c Credentials) lookup(k string) string {
	get := func(p *ProviderCredentials, key bool) string {
		if p == nil {
			return ""
		}
		if key {
			return p.APIKey
		}
		return p.BaseURL
	}
	switch k {
	case models.EnvAnthropicAPIKey:
		return get(c.Anthropic, true)
	case models.EnvAnthropicBase:
		return get(c.Anthropic, false)
	case models.EnvOpenAIAPIKey:
		return get(c.OpenAI, true)
	case models.EnvOpenAIBase:
		return get(c.OpenAI, false)
	case models.EnvModel:
		return c.Model
	}
	return ""
}

// Names lists the variables c stands for, never their values.
func (c Credentials) Names() []string {
	var out []string
	for _, k := range []string{models.EnvAnthropicAPIKey, models.EnvAnthropicBase, models.EnvOpenAIAPIKey, models.EnvOpenAIBase, models.EnvModel} {
		if c.lookup(k) != "" {
			out = append(out, k)
		}
	}
	return out
}

// Check reports what is wrong with c, naming the field.
func (c Credentials) Check() error {
	for name, p := range map[string]*ProviderCredentials{"anthropic": c.Anthropic, "openai": c.OpenAI} {
		if p == nil {
			continue
		}
		if strings.ContainsAny(p.APIKey, " \t\r\n") {
			return fmt.Errorf("%s.apiKey: contains white space", name)
		}
		if p.BaseURL != "" && !strings.HasPrefix(p.BaseURL, "http://") && !strings.HasPrefix(p.BaseURL, "https://") {
			return fmt.Errorf("%s.baseUrl: %q is not an http:// or https:// URL", name, p.BaseURL)
		}
	}
	if c.Model != "" {
		if p, _, _ := strings.Cut(c.Model, "/"); p != models.ProviderAnthropic && p != models.ProviderOpenAI {
			return fmt.Errorf("model: %q does not start with anthropic/ or openai/", c.Model)
		}
	}
	return nil
}

// credentialsPath is where the credentials of the data directory are.
func (e *Env) credentialsPath() string {
	if e.DataDir == "" {
		return ""
	}
	return filepath.Join(e.DataDir, CredentialsFile)
}

// LoadCredentials reads the stored credentials; none stored is an empty
// Credentials and no error.
func (e *Env) LoadCredentials() (Credentials, error) {
	var c Credentials
	p := e.credentialsPath()
	if p == "" {
		return c, nil
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		// The error of encoding/json can quote the input: say where, not what.
		return Credentials{}, fmt.Errorf("%s: not valid credentials JSON; run `coding-agent login` again or remove the file", p)
	}
	return c, nil
}

// SaveCredentials stores c, replacing what was stored, with mode 0600
// (written to a temporary file of mode 0600 and renamed, so the file is
// never readable by others, not even for a moment). The default model is
// chosen again.
func (e *Env) SaveCredentials(c Credentials) error {
	if err := c.Check(); err != nil {
		return err
	}
	p := e.credentialsPath()
	if p == "" {
		return errors.New("no data directory to store the credentials in")
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(p), "."+CredentialsFile+".tmp-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, werr := f.Write(append(b, '\n'))
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		return fmt.Errorf("storing credentials in %s: %w", p, werr)
	}
	e.resetModel()
	return nil
}

// RemoveCredentials deletes the stored credentials; it reports whether
// there were any. The default model is chosen again.
func (e *Env) RemoveCredentials() (bool, error) {
	p := e.credentialsPath()
	if p == "" {
		return false, nil
	}
	err := os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	e.resetModel()
	return true, nil
}
