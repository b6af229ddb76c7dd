package session

import (
	"errors"
	"os"
	"slices"

	"github.com/coding-agent/coding-agent/session/models"
)

// getenv reads the environment through Env.Getenv, if set.
func (e *Env) getenv(k string) string {
	if e.Getenv != nil {
		return e.Getenv(k)
	}
	return os.Getenv(k)
}

// defaultModel is the model new sessions start with: Env.Model (from
// --model), else $CODING_AGENT_MODEL, else config.json's model, else the
// default model of the one provider that has credentials. It is chosen once; nil when none is
// configured (prompts then fail with -32010).
func (e *Env) defaultModel() models.Model {
	e.modelOnce.Do(func() {
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
	})
	return e.model
}

// ModelError returns why no default model is configured, nil if one is.
func (e *Env) ModelError() error {
	if e.defaultModel() != nil {
		return nil
	}
	return e.modelErr
}

// selectModel returns the model named by spec ("provider/model").
func (e *Env) selectModel(spec string) (models.Model, error) {
	if spec == "" {
		return nil, errors.New("a model is required, as provider/model")
	}
	return models.Select(spec, e.getenv, e.ModelOptions)
}

// configuredModels lists the models a session may switch to, current first.
func (e *Env) configuredModels(current string) []string {
	list := models.Configured(e.getenv)
	if current != "" && !slices.Contains(list, current) {
		list = append([]string{current}, list...)
	}
	return list
}
