package session

import (
	"slices"

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
	return []ConfigOption{preset, model}
}
