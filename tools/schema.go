package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// validator checks a tool's arguments against its JSON Schema.
type validator struct {
	tool   string
	raw    json.RawMessage
	schema *jsonschema.Schema
}

// newValidator compiles schema, which is a constant of this package: a
// failure is a programmer error.
func newValidator(tool, schema string) *validator {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", tool, err))
	}
	c := jsonschema.NewCompiler()
	url := "coding-agent:" + tool + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", tool, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", tool, err))
	}
	return &validator{tool: tool, raw: json.RawMessage(schema), schema: s}
}

// decode validates args against the schema and then decodes them into v.
// The error is a *ValidationError naming the field and the rule.
func (v *validator) decode(args json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &ValidationError{Tool: v.tool, Rule: "not valid JSON: " + err.Error()}
	}
	if err := v.schema.Validate(inst); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			return v.convert(ve)
		}
		return &ValidationError{Tool: v.tool, Rule: err.Error()}
	}
	if err := json.Unmarshal(args, dst); err != nil {
		return &ValidationError{Tool: v.tool, Rule: err.Error()}
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// convert picks the most specific cause of a schema violation: the leaf
// that is deepest in the instance, so that "edits/0/oldText: missing" wins
// over "edits: invalid".
func (v *validator) convert(ve *jsonschema.ValidationError) *ValidationError {
	leaf := deepestLeaf(ve)
	field := "/" + strings.Join(leaf.InstanceLocation, "/")
	rule := leaf.ErrorKind.LocalizedString(printer)
	// "missing property 'path'" is reported at the parent object; name the
	// missing field itself.
	if rp, ok := requiredField(rule); ok {
		field = strings.TrimSuffix(field, "/") + "/" + rp
		rule = "required"
	}
	return &ValidationError{Tool: v.tool, Field: field, Rule: rule}
}

func deepestLeaf(ve *jsonschema.ValidationError) *jsonschema.ValidationError {
	best := ve
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if len(e.InstanceLocation) > len(best.InstanceLocation) || len(best.Causes) > 0 {
				best = e
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return best
}

// requiredField extracts the name from "missing property 'name'".
func requiredField(rule string) (string, bool) {
	const p = "missing property '"
	if strings.HasPrefix(rule, p) && strings.HasSuffix(rule, "'") {
		return strings.TrimSuffix(strings.TrimPrefix(rule, p), "'"), true
	}
	return "", false
}
