package typebox

import (
	"strings"

	"github.com/dlclark/regexp2/v2"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// objectInstance is an object being validated, with its keys in the order
// JavaScript enumerates them, which is the order of its errors.
type objectInstance struct {
	props map[string]any
	keys  []string
}

// objectKeywords checks the object keywords in TypeBox's order.
func (c *checker) objectKeywords(ctx *errCtx, s *jsObject, path string, value map[string]any) bool {
	obj := objectInstance{props: value, keys: jsjson.Keys(value)}
	run := newKeywordRun(ctx)
	_ = run.next(c.checkRequired(ctx, s, path, obj)) &&
		run.next(c.checkAdditionalProperties(ctx, s, path, obj)) &&
		run.next(c.checkDependencies(ctx, s, path, obj)) &&
		run.next(c.checkDependentRequired(ctx, s, path, obj)) &&
		run.next(c.checkDependentSchemas(ctx, s, path, obj)) &&
		run.next(c.checkPatternProperties(ctx, s, path, obj)) &&
		run.next(c.checkProperties(ctx, s, path, obj)) &&
		run.next(c.checkPropertyNames(ctx, s, path, obj)) &&
		run.next(c.checkMinProperties(ctx, s, path, obj)) &&
		run.next(c.checkMaxProperties(ctx, s, path, obj))
	return run.ok
}

func (c *checker) checkRequired(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	required, isReq := stringListKeyword(s, "required")
	if !isReq {
		return true
	}
	var missing []string
	for _, key := range required {
		if _, has := obj.props[key]; !has {
			missing = append(missing, key)
		}
	}
	if len(missing) == 0 {
		return true
	}
	return ctx.addError(schemaError{keyword: "required", instancePath: path,
		message: "must have required properties " + strings.Join(missing, ", "), missing: missing[0]})
}

func (c *checker) checkAdditionalProperties(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	additional, isAP := schemaKeyword(s, "additionalProperties")
	if !isAP {
		return true
	}
	props, hasProps := schemaMapKeyword(s, "properties")
	var re *regexp2.Regexp
	if patterns, hasPatterns := schemaMapKeyword(s, "patternProperties"); hasPatterns {
		re = c.cs.pattern(additionalPattern(patterns))
	}
	extra := false
	for _, key := range obj.keys {
		if hasProps {
			if _, known := props.vals[key]; known {
				continue
			}
		}
		if re != nil && c.test(re, key) {
			continue
		}
		if !c.validate(ctx, additional, path+"/"+encodeFragment(key), obj.props[key]) {
			extra = true
			if ctx.short() {
				break
			}
		}
	}
	return !extra || ctx.add("additionalProperties", path, "must not have additional properties")
}

func (c *checker) checkDependencies(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	deps, isDeps := dependenciesKeyword(s)
	if !isDeps {
		return true
	}
	run := newKeywordRun(ctx)
	for _, key := range deps.keys {
		if _, has := obj.props[key]; !has {
			continue
		}
		var passed bool
		if names, isList := stringList(deps.vals[key]); isList {
			// TypeBox reports one error per present property, however many
			// of its dependencies are missing.
			passed = hasAll(obj.props, names) || ctx.add("dependencies", path, dependencyMessage(key, names))
		} else {
			passed = c.validate(ctx, deps.vals[key], path, obj.props)
		}
		if !run.next(passed) {
			return false
		}
	}
	return run.ok
}

func (c *checker) checkDependentRequired(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	deps, isDeps := dependentRequiredKeyword(s)
	if !isDeps {
		return true
	}
	run := newKeywordRun(ctx)
	for _, key := range deps.keys {
		if _, has := obj.props[key]; !has {
			continue
		}
		// Unlike dependencies, one error per missing dependency.
		names, _ := stringList(deps.vals[key])
		for _, name := range names {
			if _, has := obj.props[name]; !has && !run.next(ctx.add("dependentRequired", path, dependencyMessage(key, names))) {
				return false
			}
		}
	}
	return run.ok
}

func (c *checker) checkDependentSchemas(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	deps, isDeps := schemaMapKeyword(s, "dependentSchemas")
	if !isDeps {
		return true
	}
	run := newKeywordRun(ctx)
	for _, key := range deps.keys {
		if _, has := obj.props[key]; has && !run.next(c.validate(ctx, deps.vals[key], path, obj.props)) {
			return false
		}
	}
	return run.ok
}

func (c *checker) checkPatternProperties(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	patterns, isPP := schemaMapKeyword(s, "patternProperties")
	if !isPP {
		return true
	}
	run := newKeywordRun(ctx)
	for _, pattern := range patterns.keys {
		re := c.cs.pattern(pattern)
		if re == nil {
			continue
		}
		for _, key := range obj.keys {
			if c.test(re, key) && !run.next(c.validate(ctx, patterns.vals[pattern], path+"/"+encodeFragment(key), obj.props[key])) {
				return false
			}
		}
	}
	return run.ok
}

func (c *checker) checkProperties(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	props, isProps := schemaMapKeyword(s, "properties")
	if !isProps {
		return true
	}
	run := newKeywordRun(ctx)
	for _, key := range props.keys {
		if v, has := obj.props[key]; has && !run.next(c.validate(ctx, props.vals[key], path+"/"+encodeFragment(key), v)) {
			return false
		}
	}
	return run.ok
}

func (c *checker) checkPropertyNames(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	names, present := s.get("propertyNames")
	if !present || !(isSchema(names) || isArray(names)) {
		return true
	}
	var bad []string
	for _, key := range obj.keys {
		if !c.validate(ctx, names, path+"/"+encodeFragment(key), key) {
			bad = append(bad, key)
			if ctx.short() {
				break
			}
		}
	}
	return len(bad) == 0 || ctx.add("propertyNames", path, "property names "+strings.Join(bad, ", ")+" are invalid")
}

func (c *checker) checkMinProperties(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	limit, isNum := numberKeyword(s, "minProperties")
	return !isNum || float64(len(obj.keys)) >= limit ||
		ctx.add("minProperties", path, "must not have fewer than "+jsNumberString(limit)+" properties")
}

func (c *checker) checkMaxProperties(ctx *errCtx, s *jsObject, path string, obj objectInstance) bool {
	limit, isNum := numberKeyword(s, "maxProperties")
	return !isNum || float64(len(obj.keys)) <= limit ||
		ctx.add("maxProperties", path, "must not have more than "+jsNumberString(limit)+" properties")
}

func hasAll(props map[string]any, names []string) bool {
	for _, name := range names {
		if _, has := props[name]; !has {
			return false
		}
	}
	return true
}

func dependencyMessage(key string, names []string) string {
	return "must have properties " + strings.Join(names, ", ") + " when property " + key + " is present"
}

func encodeFragment(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}
