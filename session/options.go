package session

import (
	"fmt"
	"slices"

	"github.com/coding-agent/coding-agent/session/models"
	"github.com/coding-agent/coding-agent/tools"
)

// presetValues describes the permission presets as the values of the
// "preset" setting (ACP's modes).
var presetValues = []ConfigValue{
	{Value: string(tools.ReadOnly), Name: "Read only", Description: "Tools may read anywhere; edits, writes and commands that write outside a private temp directory need approval."},
	{Value: string(tools.WorkspaceWrite), Name: "Workspace write", Description: "Edits and sandboxed commands may write inside the workspace; anything else needs approval."},
	{Value: string(tools.FullAccess), Name: "Full access", Description: "No sandbox: commands and edits run with your permissions. Protected storage (.git, the agent's data) stays protected."},
}

// ConfigOptions returns the session's settings: the permission preset
// (category "mode") and the model (category "model"), each with its
// current value and the values it can take.
func (s *Session) ConfigOptions() []ConfigOption {
	preset := ConfigOption{ID: "preset", Name: "Permissions", Category: "mode", CurrentValue: string(s.Preset()), Values: slices.Clone(presetValues)}
	model := ConfigOption{ID: "model", Name: "Model", Category: "model"}
	if m := s.Model(); m != nil {
		model.CurrentValue = m.Name()
	}
	for _, name := range s.env.configuredModels(model.CurrentValue) {
		model.Values = append(model.Values, ConfigValue{Value: name, Name: name})
	}
	thought := s.Thinking()
	if thought == "" {
		thought = ThinkingDefault
	}
	level := ConfigOption{ID: "thought_level", Name: "Thinking", Category: "thought_level", CurrentValue: thought, Values: slices.Clone(thinkingValues)}
	return []ConfigOption{preset, model, level}
}

// ThinkingDefault is the "thought_level" value that leaves the reasoning
// effort to the model: no extended thinking for Anthropic models, the
// provider's default effort for OpenAI's.
const ThinkingDefault = "default"

// thinkingValues are the values of the "thought_level" setting, mapped to
// Anthropic extended-thinking budgets and OpenAI reasoning_effort.
var thinkingValues = []ConfigValue{
	{Value: ThinkingDefault, Name: "Default", Description: "The model's own default: no extended thinking for Claude, the default reasoning effort for OpenAI models."},
	{Value: models.ThinkingLow, Name: "Low", Description: "Brief reasoning: a 4,096-token thinking budget for Claude, reasoning_effort low for OpenAI models."},
	{Value: models.ThinkingMedium, Name: "Medium", Description: "A 16,384-token thinking budget for Claude, reasoning_effort medium for OpenAI models."},
	{Value: models.ThinkingHigh, Name: "High", Description: "Thorough reasoning: a 32,000-token thinking budget for Claude, reasoning_effort high for OpenAI models."},
}

// Thinking returns the session's reasoning effort: "" for the model's
// default, or low, medium or high.
func (s *Session) Thinking() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.thought
}

// SetThinking sets the reasoning effort of later requests: "default" (or
// ""), low, medium or high. It returns whether it changed.
func (s *Session) SetThinking(level string) (bool, error) {
	switch level {
	case ThinkingDefault:
		level = ""
	case "", models.ThinkingLow, models.ThinkingMedium, models.ThinkingHigh:
	default:
		return false, fmt.Errorf("unknown thought level %q (valid: default, low, medium, high)", level)
	}
	s.mu.Lock()
	changed := s.thought != level
	s.thought = level
	s.mu.Unlock()
	if changed {
		s.journal.append(record{Type: recThought, Thought: level})
	}
	return changed, nil
}
