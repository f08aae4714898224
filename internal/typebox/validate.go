package typebox

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Validate returns the arguments coerced and validated against schema, exactly as
// pi-ai's validateToolArguments does for a plain JSON-schema object (TypeBox Value.Convert, then
// the AJV-style coercion, then the check). args is never mutated. On failure the error's
// message is pi's text: `Validation failed for tool "<name>":\n  - <path>: <message>\n...\n\nReceived arguments:\n<JSON.stringify(args, null, 2)>`.
//
// A nil, empty or null schema means {"type":"object","properties":{}}. A
// schema that is not a JSON object, or that pi could not compile either,
// gives an error naming the tool. Where pi throws a JavaScript error (a null
// sub-schema, a $ref cycle) the error carries the same message.
func Validate(toolName string, schema json.RawMessage, args map[string]any) (map[string]any, error) {
	v, err := ValidateValue(toolName, schema, args)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	return m, nil
}

// ValidateValue is Validate for arguments of any JSON value: a model may
// send an array, a string, a number or null, which pi keeps and validates
// as it is. Such a value is coerced as pi coerces it; where coercion
// replaces it (a number for a string), pi returns the replacement if it
// passes and otherwise the value as received, without an error (its
// validateToolArguments does so), and so does this. The result is a map
// only when the arguments are an object.
func ValidateValue(toolName string, schema json.RawMessage, args any) (any, error) {
	cs, err := loadSchema(schema)
	var thrown jsThrow
	if errors.As(err, &thrown) {
		return nil, thrown
	}
	if err != nil {
		return nil, fmt.Errorf("tool %q: invalid parameters schema: %w", toolName, err)
	}
	received, err := normalizeJSON(args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", toolName, err)
	}
	// pi first runs TypeBox's Value.Convert. It converts only TypeBox types,
	// which carry a "~kind" marker that never survives JSON, so for a plain
	// JSON schema it changes nothing and is not ported.
	work := cloneJSON(received)
	coerced, err := cs.coerce(work, cs.root)
	if err != nil {
		return nil, evalError(toolName, err)
	}
	c := &checker{cs: cs, root: cs.root}
	if _, isObject := work.(map[string]any); isObject {
		if m, ok := coerced.(map[string]any); ok {
			work = m
		}
	} else if !sameValue(coerced, work) {
		valid, _, err := c.run(coerced, true)
		if err != nil {
			return nil, evalError(toolName, err)
		}
		if valid {
			return coerced, nil
		}
		return work, nil
	}
	valid, errs, err := c.run(work, true)
	if err != nil {
		return nil, evalError(toolName, err)
	}
	if valid {
		return work, nil
	}
	return nil, errors.New(validationMessage(toolName, errs, received))
}

// sameValue is JavaScript's === for what coercion returns from a value
// that is not an object: equal scalars, or the same array (coerced in
// place).
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case []any:
		y, ok := b.([]any)
		return ok && len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
	case map[string]any:
		return false
	default:
		return a == b
	}
}

// evalError is an error that stopped an evaluation: what pi throws keeps
// its text, a pattern that could not finish its match is named with the tool.
func evalError(toolName string, err error) error {
	var thrown jsThrow
	if errors.As(err, &thrown) {
		return thrown
	}
	return fmt.Errorf("tool %q: %w", toolName, err)
}

func validationMessage(toolName string, errs []schemaError, received any) string {
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		lines = append(lines, "  - "+formatValidationPath(e)+": "+e.message)
	}
	list := strings.Join(lines, "\n")
	if list == "" {
		list = "Unknown validation error"
	}
	return "Validation failed for tool \"" + toolName + "\":\n" + list + "\n\nReceived arguments:\n" + jsonStringify(received)
}

// formatValidationPath is pi's: the instance path with dots, "root" when
// empty, and for required the first missing property appended.
func formatValidationPath(e schemaError) string {
	base := strings.ReplaceAll(strings.TrimPrefix(e.instancePath, "/"), "/", ".")
	if e.keyword == "required" && e.missing != "" {
		if base == "" {
			return e.missing
		}
		return base + "." + e.missing
	}
	if base == "" {
		return "root"
	}
	return base
}
