package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/coding-agent/coding-agent/tools"
)

// Command is a slash command the session implements: a prompt that starts
// with "/" + Name runs it instead of going to the model.
type Command struct {
	Name        string
	Description string
	// Hint describes the command's argument; empty when it takes none.
	Hint string
}

// commands are the slash commands every session implements, in the order
// they are listed.
var commands = []Command{
	{Name: "preset", Description: "Choose the permission preset (read-only, workspace-write, full-access)", Hint: "read-only | workspace-write | full-access"},
	{Name: "model", Description: "Choose the model; without a name, list the models configured", Hint: "provider/model"},
	{Name: "sessions", Description: "List the saved sessions of this directory, newest first"},
	{Name: "compact", Description: "Summarize the conversation so far to free context", Hint: "what to keep (optional)"},
	{Name: "help", Description: "List the commands"},
}

// Commands returns the slash commands the session implements (ACP's
// available commands).
func (s *Session) Commands() []Command { return append([]Command(nil), commands...) }

// parseCommand recognizes a prompt that is one text block starting with a
// known command: "/name" or "/name argument".
func parseCommand(prompt []Content) (name, arg string, ok bool) {
	if len(prompt) != 1 || prompt[0].Type != ContentText {
		return "", "", false
	}
	t := strings.TrimSpace(prompt[0].Text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	name, arg, _ = strings.Cut(t[1:], " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, arg = name[:i], name[i+1:]+" "+arg
	}
	for _, c := range commands {
		if c.Name == name {
			return name, strings.TrimSpace(arg), true
		}
	}
	return "", "", false
}

// runCommand runs a slash command other than /compact: its answer is an
// agent message, and nothing goes to the model or into its history.
func (s *Session) runCommand(ctx context.Context, name, arg string) (StopReason, error) {
	var reply string
	switch name {
	case "preset":
		if arg == "" {
			reply = fmt.Sprintf("The permission preset is %s. Choose one with /preset read-only, /preset workspace-write or /preset full-access.", s.Preset())
			break
		}
		p, err := tools.ParsePreset(arg)
		if err != nil {
			reply = "Not changed: " + err.Error() + "."
			break
		}
		s.ChangePreset(p)
		reply = fmt.Sprintf("The permission preset is now %s.", p)
	case "model":
		current := ""
		if m := s.Model(); m != nil {
			current = m.Name()
		}
		if arg == "" {
			var b strings.Builder
			fmt.Fprintf(&b, "The model is %s. Models configured:\n", orNone(current))
			for _, name := range s.env.configuredModels(current) {
				fmt.Fprintf(&b, "- %s\n", name)
			}
			b.WriteString("Choose one with /model provider/model.")
			reply = b.String()
			break
		}
		m, err := s.env.selectModel(arg)
		if err != nil {
			reply = "Not changed: " + err.Error() + "."
			break
		}
		s.SetModel(m)
		s.emit(&ConfigChanged{Options: s.ConfigOptions()})
		reply = fmt.Sprintf("The model is now %s.", m.Name())
	case "sessions":
		list, err := s.env.StoredSessions()
		if err != nil {
			return "", err
		}
		var b strings.Builder
		n := 0
		for _, st := range list {
			if st.Cwd != s.cwd {
				continue
			}
			if n == 20 {
				b.WriteString("…\n")
				break
			}
			n++
			fmt.Fprintf(&b, "- %s  %s  %s\n", st.UpdatedAt, st.ID, orNone(st.Title))
		}
		if n == 0 {
			reply = "No saved sessions in " + s.cwd + "."
		} else {
			reply = "Saved sessions in " + s.cwd + ", newest first:\n" + b.String()
		}
	case "help":
		var b strings.Builder
		b.WriteString("Commands:\n")
		for _, c := range commands {
			if c.Hint != "" {
				fmt.Fprintf(&b, "- /%s <%s>: %s\n", c.Name, c.Hint, c.Description)
			} else {
				fmt.Fprintf(&b, "- /%s: %s\n", c.Name, c.Description)
			}
		}
		reply = b.String()
	}
	if ctx.Err() != nil {
		return StopCancelled, nil
	}
	s.emit(&MessageChunk{MessageID: newID("msg"), Text: reply})
	return StopEndTurn, nil
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// ChangePreset sets the permission preset, as the host's user chose it,
// and tells every watcher (ModeChanged, then ConfigChanged). The model
// never can.
func (s *Session) ChangePreset(p tools.Preset) error {
	if _, err := s.SetPreset(p); err != nil {
		return err
	}
	s.env.Logger.Info("session preset changed", "session", s.ID(), "preset", p)
	s.emit(&ModeChanged{Preset: p})
	s.emit(&ConfigChanged{Options: s.ConfigOptions()})
	return nil
}
