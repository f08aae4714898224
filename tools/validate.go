package tools

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/internal/typebox"
)

// ValidateArguments returns the arguments coerced and validated against schema, exactly as
// pi-ai's validateToolArguments does; see typebox.Validate. args is never mutated. On failure
// the error's message is pi's text, which the model gets as the tool's result.
func ValidateArguments(toolName string, schema json.RawMessage, args map[string]any) (map[string]any, error) {
	return typebox.Validate(toolName, schema, args)
}

// ValidateValue is ValidateArguments for arguments of any JSON value (see
// typebox.ValidateValue); only an object comes back as a map.
func ValidateValue(toolName string, schema json.RawMessage, args any) (any, error) {
	return typebox.ValidateValue(toolName, schema, args)
}
