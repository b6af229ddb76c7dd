package session

import (
	"context"
	"errors"
	"os"
	"slices"

	"github.com/coding-agent/coding-agent/session/models"
)

// getenv reads the environment through Env.Getenv, if set, and falls back
// to the stored credentials (`coding-agent login`, ACP authenticate) for
// the model variables the environment does not set.
func (e *Env) getenv(k string) string {
	var v string
	if e.Getenv != nil {
		v = e.Getenv(k)
	} else {
		v = os.Getenv(k)
	}
	if v != "" {
		return v
	}
	return e.storedCredentials().lookup(k)
}

// storedCredentials returns the stored credentials; an unreadable file is
// logged (never its content) and counts as none.
func (e *Env) storedCredentials() Credentials {
	c, err := e.LoadCredentials()
	if err != nil {
		e.init()
		e.Logger.Warn("stored credentials ignored", "err", err)
	}
	return c
}

// defaultModel is the model new sessions start with: Env.Model (from
// --model), else $CODING_AGENT_MODEL, else config.json's model, else the
// default model of the one provider that has credentials. It is chosen once; nil when none is
// configured (prompts then fail with auth_required, -32000).
func (e *Env) defaultModel() models.Model {
	e.modelMu.Lock()
	defer e.modelMu.Unlock()
	if !e.modelChosen {
		e.modelChosen = true
		e.init()
		spec := e.Model
		if spec == "" {
			spec = e.getenv("CODING_AGENT_MODEL")
		}
		if spec == "" {
			cfg, _ := e.config()
			spec = cfg.Model
		}
		e.model, e.modelErr = models.Select(spec, e.getenv, e.ModelOptions)
		switch {
		case e.modelErr == nil:
			e.Logger.Info("model configured", "model", e.model.Name())
		case errors.Is(e.modelErr, models.ErrNoModel):
			e.Logger.Info("no model configured: prompts will fail until one is (set --model or CODING_AGENT_MODEL and a provider key)")
		default:
			e.Logger.Warn("model not usable", "err", e.modelErr)
		}
	}
	return e.model
}

// resetModel makes the next defaultModel choose again: the stored
// credentials changed.
func (e *Env) resetModel() {
	e.modelMu.Lock()
	e.modelChosen, e.model, e.modelErr = false, nil, nil
	e.modelMu.Unlock()
}

// ModelError returns why no default model is configured, nil if one is.
func (e *Env) ModelError() error {
	if e.defaultModel() != nil {
		return nil
	}
	e.modelMu.Lock()
	defer e.modelMu.Unlock()
	return e.modelErr
}

// NoModel returns why there is no model to prompt: the configuration's own
// error (a key missing for the model named, say) or, when none, the one
// "no model configured" error with the variables to set.
func (e *Env) NoModel() *models.NoModelError {
	var nm *models.NoModelError
	if err := e.ModelError(); errors.As(err, &nm) {
		return nm
	} else if err != nil {
		return &models.NoModelError{Msg: err.Error(), Variables: models.NoModel().Variables}
	}
	return models.NoModel()
}

// selectModel returns the model named by spec ("provider/model").
func (e *Env) selectModel(spec string) (models.Model, error) {
	if spec == "" {
		return nil, errors.New("a model is required, as provider/model")
	}
	return models.Select(spec, e.getenv, e.ModelOptions)
}

// configuredModels lists the models a session may switch to, current first.
// Besides the providers' current models, that is what config.json's
// "models" names and what an OpenAI-compatible server at OPENAI_BASE_URL
// lists at /v1/models: a local server is never offered a model it does not
// serve.
func (e *Env) configuredModels(current string) []string {
	list := models.Configured(e.getenv)
	add := func(names ...string) {
		for _, n := range names {
			if !slices.Contains(list, n) {
				list = append(list, n)
			}
		}
	}
	if cfg, err := e.config(); err == nil {
		var names []string
		for n := range cfg.Models {
			names = append(names, n)
		}
		slices.Sort(names)
		add(names...)
	}
	add(e.servedModels()...)
	if current != "" && !slices.Contains(list, current) {
		list = append([]string{current}, list...)
	}
	return list
}

// servedModels is the model list of the OpenAI-compatible server at
// OPENAI_BASE_URL (not OpenAI's own), asked once per base URL.
func (e *Env) servedModels() []string {
	base := e.getenv(models.EnvOpenAIBase)
	if base == "" || models.IsOfficialOpenAI(base) {
		return nil
	}
	e.servedMu.Lock()
	defer e.servedMu.Unlock()
	if e.served.base != base {
		e.served.base = base
		e.served.list = models.ServedModels(context.Background(), e.ModelOptions.HTTPClient, base, e.getenv(models.EnvOpenAIAPIKey))
	}
	return slices.Clone(e.served.list)
}

// DefaultModelName returns the name of the default model, "" when none is
// configured.
func (e *Env) DefaultModelName() string {
	if m := e.defaultModel(); m != nil {
		return m.Name()
	}
	return ""
}
