package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// The tools' argument schemas are small JSON Schemas using a fixed set of
// keywords. They are checked here rather than with a general validator:
// the one we used compiled its meta-schemas in its package init, about
// 15 ms and 1.7 MB on every start of the binary — more than the whole
// start-up budget of an editor backend. The keywords supported are exactly
// those our schemas use; a schema with any other keyword panics when its
// tool is built, so nothing is silently left unchecked.

// schemaNode is one compiled (sub)schema.
type schemaNode struct {
	Type                 string                 `json:"type"`
	Properties           map[string]*schemaNode `json:"properties"`
	Required             []string               `json:"required"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	MinLength            *int                   `json:"minLength"`
	MaxLength            *int                   `json:"maxLength"`
	Minimum              *float64               `json:"minimum"`
	MinItems             *int                   `json:"minItems"`
	Items                *schemaNode            `json:"items"`
	Enum                 []string               `json:"enum"`
	Description          string                 `json:"description"`
}

// knownKeywords are the keywords schemaNode understands.
var knownKeywords = []string{"type", "properties", "required", "additionalProperties", "minLength", "maxLength", "minimum", "minItems", "items", "enum", "description"}

// validator checks a tool's arguments against its JSON Schema.
type validator struct {
	tool string
	raw  json.RawMessage
	root *schemaNode
}

// compiled caches the validators: schemas are constants of this package,
// so each is compiled once per process, not once per tool construction.
var compiled sync.Map // tool name → *validator

// newValidator returns the validator of schema, which is a constant of this
// package: a failure is a programmer error.
func newValidator(tool, schema string) *validator {
	if v, ok := compiled.Load(tool); ok && string(v.(*validator).raw) == schema {
		return v.(*validator)
	}
	root, err := compileSchema([]byte(schema))
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %s: %v", tool, err))
	}
	v := &validator{tool: tool, raw: json.RawMessage(schema), root: root}
	compiled.Store(tool, v)
	return v
}

// compileSchema parses a schema and checks that it uses only known
// keywords with values of the right types.
func compileSchema(raw []byte) (*schemaNode, error) {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return nil, err
	}
	for k := range keys {
		if !slices.Contains(knownKeywords, k) {
			return nil, fmt.Errorf("unsupported keyword %q", k)
		}
	}
	var n schemaNode
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&n); err != nil {
		return nil, err
	}
	for name, p := range keys {
		switch name {
		case "properties":
			var props map[string]json.RawMessage
			if err := json.Unmarshal(p, &props); err != nil {
				return nil, err
			}
			n.Properties = map[string]*schemaNode{}
			for k, v := range props {
				sub, err := compileSchema(v)
				if err != nil {
					return nil, fmt.Errorf("properties.%s: %w", k, err)
				}
				n.Properties[k] = sub
			}
		case "items":
			sub, err := compileSchema(p)
			if err != nil {
				return nil, fmt.Errorf("items: %w", err)
			}
			n.Items = sub
		}
	}
	switch n.Type {
	case "object", "array", "string", "integer", "number", "boolean":
	default:
		return nil, fmt.Errorf("unsupported type %q", n.Type)
	}
	return &n, nil
}

// decode validates args against the schema and then decodes them into dst.
// The error is a *ValidationError naming the field and the rule.
func (v *validator) decode(args json.RawMessage, dst any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	inst, err := parseJSON(args)
	if err != nil {
		return &ValidationError{Tool: v.tool, Rule: "not valid JSON: " + err.Error()}
	}
	if field, rule := check(v.root, inst, ""); rule != "" {
		if field == "" {
			field = "/"
		}
		return &ValidationError{Tool: v.tool, Field: field, Rule: rule}
	}
	// Fill dst from the tree already decoded: a second JSON parse would
	// double the cost of a large write (50 MiB of content is about 0.4 s
	// per parse).
	if err := assign(reflect.ValueOf(dst).Elem(), inst, ""); err != nil {
		return &ValidationError{Tool: v.tool, Field: err.field, Rule: err.rule}
	}
	return nil
}

type assignError struct{ field, rule string }

// assign stores the decoded JSON value val
// into dst, which may be a struct (fields by json tag), a string, a bool, a
// number, a pointer to one of those, a slice or a map[string]any.
func assign(dst reflect.Value, val any, path string) *assignError {
	if val == nil {
		dst.SetZero()
		return nil
	}
	mismatch := func() *assignError {
		return &assignError{path, fmt.Sprintf("got %s, cannot store it in a %s", jsonType(val), dst.Type())}
	}
	switch dst.Kind() {
	case reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		if err := assign(p.Elem(), val, path); err != nil {
			return err
		}
		dst.Set(p)
	case reflect.Interface:
		dst.Set(reflect.ValueOf(val))
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return mismatch()
		}
		dst.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return mismatch()
		}
		dst.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		f, ok := val.(float64)
		if !ok || !isInteger(f) {
			return mismatch()
		}
		if dst.OverflowInt(int64(f)) {
			return &assignError{path, fmt.Sprintf("%v is out of range", f)}
		}
		dst.SetInt(int64(f))
	case reflect.Float32, reflect.Float64:
		f, ok := val.(float64)
		if !ok {
			return mismatch()
		}
		dst.SetFloat(f)
	case reflect.Slice:
		arr, ok := val.([]any)
		if !ok {
			return mismatch()
		}
		out := reflect.MakeSlice(dst.Type(), len(arr), len(arr))
		for i, item := range arr {
			if err := assign(out.Index(i), item, fmt.Sprintf("%s/%d", path, i)); err != nil {
				return err
			}
		}
		dst.Set(out)
	case reflect.Map:
		obj, ok := val.(map[string]any)
		if !ok || dst.Type().Key().Kind() != reflect.String || dst.Type().Elem().Kind() != reflect.Interface {
			return mismatch()
		}
		dst.Set(reflect.ValueOf(obj))
	case reflect.Struct:
		obj, ok := val.(map[string]any)
		if !ok {
			return mismatch()
		}
		t := dst.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			v, ok := obj[name]
			if name == "" {
				// No tag: match the field name without regard to case, as
				// encoding/json does.
				for k, kv := range obj {
					if strings.EqualFold(k, f.Name) {
						name, v, ok = k, kv, true
						break
					}
				}
			}
			if ok {
				if err := assign(dst.Field(i), v, path+"/"+name); err != nil {
					return err
				}
			}
		}
	default:
		return mismatch()
	}
	return nil
}

// check returns the first violation of n by val at path, or "" for rule.
// Objects are checked in a fixed order (required, unknown properties, then
// properties by name) so the same input always gives the same error.
func check(n *schemaNode, val any, path string) (field, rule string) {
	if got := jsonType(val); !typeMatches(n.Type, val) {
		return path, fmt.Sprintf("got %s, want %s", got, n.Type)
	}
	switch x := val.(type) {
	case map[string]any:
		for _, r := range n.Required {
			if _, ok := x[r]; !ok {
				return path + "/" + r, "required"
			}
		}
		if n.AdditionalProperties != nil && !*n.AdditionalProperties {
			var unknown []string
			for k := range x {
				if _, ok := n.Properties[k]; !ok {
					unknown = append(unknown, k)
				}
			}
			if len(unknown) > 0 {
				slices.Sort(unknown)
				allowed := make([]string, 0, len(n.Properties))
				for k := range n.Properties {
					allowed = append(allowed, k)
				}
				slices.Sort(allowed)
				return path + "/" + unknown[0], fmt.Sprintf("unknown property %q (allowed: %s)", unknown[0], strings.Join(allowed, ", "))
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if p := n.Properties[k]; p != nil {
				if f, r := check(p, x[k], path+"/"+k); r != "" {
					return f, r
				}
			}
		}
	case []any:
		if n.MinItems != nil && len(x) < *n.MinItems {
			return path, fmt.Sprintf("minItems: got %d items, want at least %d", len(x), *n.MinItems)
		}
		if n.Items != nil {
			for i, item := range x {
				if f, r := check(n.Items, item, fmt.Sprintf("%s/%d", path, i)); r != "" {
					return f, r
				}
			}
		}
	case string:
		// Characters are counted only when the byte length cannot decide:
		// a string has at most as many characters as bytes, and at least
		// a quarter as many (UTF-8). A 50 MiB content with no length rule
		// is not scanned at all.
		if n.MinLength != nil && len(x) < 4**n.MinLength {
			if l := utf8.RuneCountInString(x); l < *n.MinLength {
				return path, fmt.Sprintf("minLength: got %d characters, want at least %d", l, *n.MinLength)
			}
		}
		if n.MaxLength != nil && len(x) > *n.MaxLength {
			if l := utf8.RuneCountInString(x); l > *n.MaxLength {
				return path, fmt.Sprintf("maxLength: got %d characters, want at most %d", l, *n.MaxLength)
			}
		}
		if len(n.Enum) > 0 && !slices.Contains(n.Enum, x) {
			return path, fmt.Sprintf("got %q, want one of %q", x, n.Enum)
		}
	case float64:
		if n.Minimum != nil && x < *n.Minimum {
			return path, fmt.Sprintf("minimum: got %v, want at least %v", x, *n.Minimum)
		}
	}
	return "", ""
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case float64:
		if isInteger(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func typeMatches(want string, v any) bool {
	got := jsonType(v)
	return got == want || (want == "number" && got == "integer")
}

// isInteger reports whether f is an integral value (1 and 1.0 both are, as
// in JSON Schema) that an int64 holds exactly.
func isInteger(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) <= 1<<53
}
