package typebox

import (
	"math"
	"slices"
	"strconv"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// coerce is pi-ai's coerceWithJsonSchema. It changes maps and slices inside
// value in place, so value must be a copy the caller owns.
func (cs *compiledSchema) coerce(value, schema any) (any, error) {
	if schema == nil {
		// JavaScript reads schema.allOf first and throws on null.
		return nil, jsThrow("Cannot read properties of null (reading 'allOf')")
	}
	s, ok := schema.(*jsObject)
	if !ok {
		return value, nil
	}
	next := value
	var err error
	if list, ok := s.vals["allOf"].([]any); ok {
		for _, member := range list {
			if next, err = cs.coerce(next, member); err != nil {
				return nil, err
			}
		}
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if list, ok := s.vals[key].([]any); ok {
			if next, err = cs.coerceUnion(next, list); err != nil {
				return nil, err
			}
		}
	}
	types := schemaTypes(s)
	matchesMember := false
	if len(types) > 1 {
		for _, t := range types {
			matchesMember = matchesMember || matchesJSONType(next, t)
		}
	}
	if len(types) > 0 && !matchesMember {
		for _, t := range types {
			if candidate, changed := coercePrimitive(next, t); changed {
				next = candidate
				break
			}
		}
	}
	if m, ok := next.(map[string]any); ok && slices.Contains(types, "object") {
		if err := cs.coerceObject(m, s); err != nil {
			return nil, err
		}
	}
	if list, ok := next.([]any); ok && slices.Contains(types, "array") {
		if err := cs.coerceArray(list, s); err != nil {
			return nil, err
		}
	}
	return next, nil
}

// coerceUnion coerces a copy of value with each member in turn and keeps the
// first result that the member, compiled on its own, accepts.
func (cs *compiledSchema) coerceUnion(value any, members []any) (any, error) {
	for _, member := range members {
		coerced, err := cs.coerce(cloneJSON(value), member)
		if err != nil {
			return nil, err
		}
		switch m := member.(type) {
		case *jsObject:
			if !cs.memberCompiles(m) {
				continue
			}
		case []any:
		default:
			continue
		}
		c := &checker{cs: cs, root: member}
		ok, _, err := c.run(coerced, false)
		if err != nil {
			return nil, err
		}
		if ok {
			return coerced, nil
		}
	}
	return value, nil
}

func (cs *compiledSchema) coerceObject(value map[string]any, s *jsObject) error {
	props, _ := s.vals["properties"].(*jsObject)
	if props != nil {
		for _, key := range props.keys {
			if v, present := value[key]; present {
				coerced, err := cs.coerce(v, props.vals[key])
				if err != nil {
					return err
				}
				value[key] = coerced
			}
		}
	}
	additional, ok := s.vals["additionalProperties"].(*jsObject)
	if !ok {
		return nil
	}
	for _, key := range jsjson.Keys(value) {
		if props != nil {
			if _, defined := props.vals[key]; defined {
				continue
			}
		}
		coerced, err := cs.coerce(value[key], additional)
		if err != nil {
			return err
		}
		value[key] = coerced
	}
	return nil
}

func (cs *compiledSchema) coerceArray(value []any, s *jsObject) error {
	var err error
	switch items := s.vals["items"].(type) {
	case []any:
		for i := range value {
			if i >= len(items) || !jsTruthy(items[i]) {
				continue
			}
			if value[i], err = cs.coerce(value[i], items[i]); err != nil {
				return err
			}
		}
	case *jsObject:
		for i := range value {
			if value[i], err = cs.coerce(value[i], items); err != nil {
				return err
			}
		}
	}
	return nil
}

func jsTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0 && !math.IsNaN(x)
	case string:
		return x != ""
	}
	return true
}

func schemaTypes(s *jsObject) []string {
	switch t := s.vals["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, item := range t {
			if name, ok := item.(string); ok {
				out = append(out, name)
			}
		}
		return out
	}
	return nil
}

// matchesJSONType is pi's, which unlike TypeBox counts any number, even an
// infinite one, as a number.
func matchesJSONType(value any, t string) bool {
	switch t {
	case "number":
		_, ok := value.(float64)
		return ok
	case "integer":
		f, ok := value.(float64)
		return ok && isJSInteger(f)
	case "boolean", "string", "null", "array", "object":
		return typeMatches(t, value)
	}
	return false
}

// coercePrimitive is pi's coercePrimitiveByType; changed is JavaScript's
// `candidate !== value`.
func coercePrimitive(value any, t string) (any, bool) {
	switch t {
	case "number", "integer":
		switch v := value.(type) {
		case nil:
			return 0.0, true
		case string:
			if trimJSSpace(v) != "" {
				if f, ok := jsStringToNumber(v); ok && !math.IsInf(f, 0) && (t == "number" || f == math.Trunc(f)) {
					return f, true
				}
			}
		case bool:
			if v {
				return 1.0, true
			}
			return 0.0, true
		}
	case "boolean":
		switch v := value.(type) {
		case nil:
			return false, true
		case string:
			if v == "true" || v == "false" {
				return v == "true", true
			}
		case float64:
			if v == 1 || v == 0 {
				return v == 1, true
			}
		}
	case "string":
		switch v := value.(type) {
		case nil:
			return "", true
		case float64:
			return jsNumberString(v), true
		case bool:
			return strconv.FormatBool(v), true
		}
	case "null":
		if value == "" || value == 0.0 || value == false {
			return nil, true
		}
	}
	return value, false
}
