package tools

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// This file is a port of the parts of TypeBox 1.x's schema engine
// (typebox/build/schema/engine) that pi's validateToolArguments reaches for a
// plain JSON schema: the keyword guards, the order keywords are checked in,
// which errors are reported, and their en_US texts. Keywords TypeBox knows but
// tool schemas do not use ($id resources, $anchor, $dynamicRef,
// $recursiveRef, unevaluatedItems, unevaluatedProperties) are ignored.

// maxErrors is TypeBox's default Settings.maxErrors. Each error context
// (allOf, anyOf, oneOf, if and $ref open their own) stops collecting at it.
const maxErrors = 8

// maxDepth bounds nested schema evaluation. A $ref cycle that never descends
// into the value overflows the JavaScript stack in pi; here it ends the same
// way, with V8's RangeError text.
const maxDepth = 4096

var errStackOverflow = jsThrow("Maximum call stack size exceeded")

// jsThrow is an error pi throws as a JavaScript exception instead of
// reporting a validation failure; its text is V8's.
type jsThrow string

func (e jsThrow) Error() string { return string(e) }

// jsObject is a JSON object that keeps its keys in document order, as
// JSON.parse does: TypeBox walks properties, patternProperties and
// dependencies in that order, and the order decides the order of errors.
type jsObject struct {
	keys []string
	vals map[string]any
}

func (o *jsObject) get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// parseOrdered decodes JSON into nil, bool, float64, string, []any and
// *jsObject. Like JSON.parse, a repeated key keeps its first position and its
// last value, and a number too large for a double becomes an infinity.
func parseOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseOrderedValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

func parseOrderedValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			list := []any{}
			for dec.More() {
				v, err := parseOrderedValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := &jsObject{vals: map[string]any{}}
		for dec.More() {
			keyTok, err := dec.Token()
			if err != nil {
				return nil, err
			}
			key := keyTok.(string)
			v, err := parseOrderedValue(dec)
			if err != nil {
				return nil, err
			}
			if _, seen := obj.vals[key]; !seen {
				obj.keys = append(obj.keys, key)
			}
			obj.vals[key] = v
		}
		_, err := dec.Token()
		return obj, err
	case json.Number:
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return f, nil
	default:
		return t, nil
	}
}

// Keyword guards, mirroring typebox/build/schema/types: a keyword whose value
// has the wrong shape is not a keyword at all.

func isSchema(v any) bool {
	switch v.(type) {
	case bool, *jsObject:
		return true
	}
	return false
}

func schemaKeyword(o *jsObject, key string) (any, bool) {
	v, ok := o.get(key)
	return v, ok && isSchema(v)
}

func numberKeyword(o *jsObject, key string) (float64, bool) {
	v, _ := o.get(key)
	f, ok := v.(float64)
	return f, ok && !math.IsInf(f, 0) && !math.IsNaN(f)
}

func stringKeyword(o *jsObject, key string) (string, bool) {
	v, _ := o.get(key)
	s, ok := v.(string)
	return s, ok
}

func schemaListKeyword(o *jsObject, key string) ([]any, bool) {
	v, _ := o.get(key)
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	for _, s := range list {
		if !isSchema(s) {
			return nil, false
		}
	}
	return list, true
}

func schemaMapKeyword(o *jsObject, key string) (*jsObject, bool) {
	v, _ := o.get(key)
	m, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, k := range m.keys {
		if !isSchema(m.vals[k]) {
			return nil, false
		}
	}
	return m, true
}

func stringListKeyword(o *jsObject, key string) ([]string, bool) {
	v, _ := o.get(key)
	return stringList(v)
}

func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		str, ok := s.(string)
		if !ok {
			return nil, false
		}
		out = append(out, str)
	}
	return out, true
}

// schemaError is one TypeBox error, already rendered in en_US.
type schemaError struct {
	keyword      string
	instancePath string
	message      string
	// missing is the first missing property of a required error: pi puts it
	// in the path.
	missing string
}

// evalMode is which of TypeBox's three evaluators a walk imitates. They
// accept the same values but stop at different points, which decides
// whether a $ref cycle behind a failing keyword is ever entered.
type evalMode int

const (
	// compiledCheck is Validator.Check, the generated code: every
	// conjunction short-circuits, anyOf stops at the first passing member,
	// contains at the first matching item.
	compiledCheck evalMode = iota
	// interpretedCheck is CheckSchema, which Errors uses for not and
	// contains: conjunctions short-circuit but anyOf, allOf and contains
	// look at every member or item.
	interpretedCheck
	// collectErrors is ErrorSchema: everything is evaluated so that every
	// error is reported.
	collectErrors
)

// errCtx is TypeBox's ErrorContext, or its CheckContext when not collecting.
type errCtx struct {
	mode evalMode
	errs []schemaError
}

func (c *errCtx) collect() bool { return c.mode == collectErrors }

// short reports whether evaluation stops at the first failure.
func (c *errCtx) short() bool { return c.mode != collectErrors }

func (c *errCtx) full() bool { return c.collect() && len(c.errs) >= maxErrors }

func (c *errCtx) child() *errCtx { return &errCtx{mode: c.mode} }

// check is the context for a nested yes/no question (not, contains):
// Errors asks it with the interpreted checker.
func (c *errCtx) check() *errCtx {
	if c.mode == compiledCheck {
		return &errCtx{mode: compiledCheck}
	}
	return &errCtx{mode: interpretedCheck}
}

// add records an error and returns false, so callers can write
// `return ok || ctx.add(...)` as TypeBox does.
func (c *errCtx) add(keyword, path, message string) bool {
	return c.addError(schemaError{keyword: keyword, instancePath: path, message: message})
}

func (c *errCtx) addError(e schemaError) bool {
	if c.collect() && !c.full() {
		c.errs = append(c.errs, e)
	}
	return false
}

func (c *errCtx) addAll(errs []schemaError) {
	for _, e := range errs {
		c.addError(e)
	}
}

// checker evaluates one compiled validator: root is what local $refs resolve
// against, which for pi's union coercion is the member schema alone.
type checker struct {
	cs       *compiledSchema
	root     any
	depth    int
	overflow bool
}

// run is pi's use of a validator: Check, and only if that fails, Errors.
func (c *checker) run(value any, collect bool) (bool, []schemaError, error) {
	ok := c.validate(&errCtx{mode: compiledCheck}, c.root, "", value)
	if c.overflow {
		return false, nil, errStackOverflow
	}
	if ok || !collect {
		return ok, nil, nil
	}
	ctx := &errCtx{mode: collectErrors}
	c.validate(ctx, c.root, "", value)
	if c.overflow {
		return false, nil, errStackOverflow
	}
	return false, ctx.errs, nil
}

// validate is ErrorSchema, CheckSchema or the compiled check, depending on
// ctx. Keywords are taken in TypeBox's order.
func (c *checker) validate(ctx *errCtx, schema any, path string, value any) bool {
	if ctx.full() || c.overflow {
		return false
	}
	if c.depth >= maxDepth {
		c.overflow = true
		return false
	}
	c.depth++
	defer func() { c.depth-- }()

	s, isObject := schema.(*jsObject)
	if !isObject {
		if b, isBool := schema.(bool); isBool && !b {
			return ctx.add("boolean", path, "schema is false")
		}
		// true, or an array: TypeBox compiles an array to a check that
		// always passes.
		return true
	}
	ok := c.typeKeyword(ctx, s, path, value)
	if !ok && ctx.short() {
		return false
	}
	switch v := value.(type) {
	case map[string]any:
		ok = c.objectKeywords(ctx, s, path, v) && ok
	case []any:
		ok = c.arrayKeywords(ctx, s, path, v) && ok
	case string:
		ok = c.stringKeywords(ctx, s, path, v) && ok
	case float64:
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			ok = numberKeywords(ctx, s, path, v) && ok
		}
	}
	if !ok && ctx.short() {
		return false
	}
	return c.applicators(ctx, s, path, value) && ok
}

func (c *checker) typeKeyword(ctx *errCtx, s *jsObject, path string, value any) bool {
	raw, present := s.get("type")
	if !present {
		return true
	}
	if name, ok := raw.(string); ok {
		return typeMatches(name, value) || ctx.add("type", path, "must be "+name)
	}
	names, ok := stringList(raw)
	if !ok {
		return true
	}
	for _, name := range names {
		if typeMatches(name, value) {
			return true
		}
	}
	return ctx.add("type", path, "must be either "+strings.Join(names, " or "))
}

func typeMatches(name string, value any) bool {
	switch name {
	case "object":
		_, ok := value.(map[string]any)
		return ok
	case "array":
		_, ok := value.([]any)
		return ok
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "integer":
		f, ok := value.(float64)
		return ok && isJSInteger(f)
	case "number":
		f, ok := value.(float64)
		return ok && !math.IsInf(f, 0) && !math.IsNaN(f)
	case "null":
		return value == nil
	case "string":
		_, ok := value.(string)
		return ok
	case "bigint", "constructor", "function", "symbol", "undefined", "void":
		return false
	default:
		// TypeBox lets unknown type names pass.
		return true
	}
}

func isJSInteger(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f)
}

func encodeFragment(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

func (c *checker) objectKeywords(ctx *errCtx, s *jsObject, path string, value map[string]any) bool {
	keys := jsKeys(value)
	// Each step reports whether evaluation may go on: in a check, the first
	// failure ends it.
	ok := true
	fail := func() bool {
		ok = false
		return !ctx.short()
	}
	if required, isReq := stringListKeyword(s, "required"); isReq {
		var missing []string
		for _, key := range required {
			if _, has := value[key]; !has {
				missing = append(missing, key)
			}
		}
		if len(missing) > 0 {
			ctx.addError(schemaError{keyword: "required", instancePath: path,
				message: "must have required properties " + strings.Join(missing, ", "), missing: missing[0]})
			if !fail() {
				return false
			}
		}
	}
	if additional, isAP := schemaKeyword(s, "additionalProperties"); isAP {
		props, hasProps := schemaMapKeyword(s, "properties")
		patterns, hasPatterns := schemaMapKeyword(s, "patternProperties")
		extra := false
		for _, key := range keys {
			if hasProps {
				if _, known := props.vals[key]; known {
					continue
				}
			}
			if hasPatterns && c.anyPatternMatches(patterns.keys, key) {
				continue
			}
			if !c.validate(ctx, additional, path+"/"+encodeFragment(key), value[key]) {
				extra = true
				if ctx.short() {
					break
				}
			}
		}
		if extra {
			ctx.add("additionalProperties", path, "must not have additional properties")
			if !fail() {
				return false
			}
		}
	}
	if deps, isDeps := dependenciesKeyword(s); isDeps {
		for _, key := range deps.keys {
			if _, has := value[key]; !has {
				continue
			}
			if names, isList := stringList(deps.vals[key]); isList {
				// TypeBox reports only the first missing dependency.
				for _, name := range names {
					if _, has := value[name]; !has {
						ctx.add("dependencies", path, dependencyMessage(key, names))
						if !fail() {
							return false
						}
						break
					}
				}
			} else if !c.validate(ctx, deps.vals[key], path, value) && !fail() {
				return false
			}
		}
	}
	if deps, isDeps := dependentRequiredKeyword(s); isDeps {
		for _, key := range deps.keys {
			if _, has := value[key]; !has {
				continue
			}
			names, _ := stringList(deps.vals[key])
			for _, name := range names {
				if _, has := value[name]; !has {
					ctx.add("dependentRequired", path, dependencyMessage(key, names))
					if !fail() {
						return false
					}
				}
			}
		}
	}
	if deps, isDeps := schemaMapKeyword(s, "dependentSchemas"); isDeps {
		for _, key := range deps.keys {
			if _, has := value[key]; has && !c.validate(ctx, deps.vals[key], path, value) && !fail() {
				return false
			}
		}
	}
	if patterns, isPP := schemaMapKeyword(s, "patternProperties"); isPP {
		for _, pattern := range patterns.keys {
			re := c.cs.pattern(pattern)
			for _, key := range keys {
				if re != nil && re.MatchString(key) && !c.validate(ctx, patterns.vals[pattern], path+"/"+encodeFragment(key), value[key]) && !fail() {
					return false
				}
			}
		}
	}
	if props, isProps := schemaMapKeyword(s, "properties"); isProps {
		for _, key := range props.keys {
			if v, has := value[key]; has && !c.validate(ctx, props.vals[key], path+"/"+encodeFragment(key), v) && !fail() {
				return false
			}
		}
	}
	if names, present := s.get("propertyNames"); present && (isSchema(names) || isArray(names)) {
		var bad []string
		for _, key := range keys {
			if !c.validate(ctx, names, path+"/"+encodeFragment(key), key) {
				bad = append(bad, key)
				if ctx.short() {
					break
				}
			}
		}
		if len(bad) > 0 {
			ctx.add("propertyNames", path, "property names "+strings.Join(bad, ", ")+" are invalid")
			if !fail() {
				return false
			}
		}
	}
	if limit, isNum := numberKeyword(s, "minProperties"); isNum && !(float64(len(keys)) >= limit) {
		ctx.add("minProperties", path, "must not have fewer than "+jsNumberString(limit)+" properties")
		if !fail() {
			return false
		}
	}
	if limit, isNum := numberKeyword(s, "maxProperties"); isNum && !(float64(len(keys)) <= limit) {
		ctx.add("maxProperties", path, "must not have more than "+jsNumberString(limit)+" properties")
		fail()
	}
	return ok
}

func isArray(v any) bool {
	_, ok := v.([]any)
	return ok
}

func dependencyMessage(key string, names []string) string {
	return "must have properties " + strings.Join(names, ", ") + " when property " + key + " is present"
}

func dependenciesKeyword(s *jsObject) (*jsObject, bool) {
	v, _ := s.get("dependencies")
	deps, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, key := range deps.keys {
		if _, isList := stringList(deps.vals[key]); !isList && !isSchema(deps.vals[key]) {
			return nil, false
		}
	}
	return deps, true
}

func dependentRequiredKeyword(s *jsObject) (*jsObject, bool) {
	v, _ := s.get("dependentRequired")
	deps, ok := v.(*jsObject)
	if !ok {
		return nil, false
	}
	for _, key := range deps.keys {
		if _, isList := stringList(deps.vals[key]); !isList {
			return nil, false
		}
	}
	return deps, true
}

func (c *checker) anyPatternMatches(patterns []string, key string) bool {
	for _, p := range patterns {
		if re := c.cs.pattern(p); re != nil && re.MatchString(key) {
			return true
		}
	}
	return false
}

func (c *checker) arrayKeywords(ctx *errCtx, s *jsObject, path string, value []any) bool {
	ok := true
	fail := func() bool {
		ok = false
		return !ctx.short()
	}
	itemsRaw, _ := s.get("items")
	tuple, isTuple := itemsRaw.([]any)
	for _, item := range tuple {
		isTuple = isTuple && isSchema(item)
	}
	if additional, isAI := schemaKeyword(s, "additionalItems"); isAI && isTuple {
		// TypeBox stops at the first failing additional item, even in Errors.
		for i := len(tuple); i < len(value); i++ {
			if !c.validate(ctx, additional, path+"/"+strconv.Itoa(i), value[i]) {
				if !fail() {
					return false
				}
				break
			}
		}
	}
	contains, hasContains := schemaKeyword(s, "contains")
	minContains, hasMinContains := numberKeyword(s, "minContains")
	if hasContains && !(hasMinContains && minContains == 0) {
		if len(value) == 0 || c.countMatching(ctx, contains, value, ctx.mode == compiledCheck) == 0 {
			ctx.add("contains", path, "must contain at least 1 valid item")
			if !fail() {
				return false
			}
		}
	}
	if isTuple {
		for i, item := range tuple {
			if i < len(value) && !c.validate(ctx, item, path+"/"+strconv.Itoa(i), value[i]) && !fail() {
				return false
			}
		}
	} else if items, isItems := schemaKeyword(s, "items"); isItems {
		offset := 0
		if prefix, isPrefix := schemaListKeyword(s, "prefixItems"); isPrefix {
			offset = len(prefix)
		}
		for i := offset; i < len(value); i++ {
			if !c.validate(ctx, items, path+"/"+strconv.Itoa(i), value[i]) && !fail() {
				return false
			}
		}
	}
	if hasContains && hasMinContains && !(float64(c.countMatching(ctx, contains, value, false)) >= minContains) {
		ctx.add("contains", path, "must contain at least 1 valid item")
		if !fail() {
			return false
		}
	}
	if limit, isNum := numberKeyword(s, "maxContains"); isNum && hasContains && !(float64(c.countMatching(ctx, contains, value, false)) <= limit) {
		ctx.add("contains", path, "must contain at least 1 valid item")
		if !fail() {
			return false
		}
	}
	if limit, isNum := numberKeyword(s, "minItems"); isNum && !(float64(len(value)) >= limit) {
		ctx.add("minItems", path, "must not have fewer than "+jsNumberString(limit)+" items")
		if !fail() {
			return false
		}
	}
	if limit, isNum := numberKeyword(s, "maxItems"); isNum && !(float64(len(value)) <= limit) {
		ctx.add("maxItems", path, "must not have more than "+jsNumberString(limit)+" items")
		if !fail() {
			return false
		}
	}
	if prefix, isPrefix := schemaListKeyword(s, "prefixItems"); isPrefix && len(value) > 0 {
		for i, item := range prefix {
			if i < len(value) && !c.validate(ctx, item, path+"/"+strconv.Itoa(i), value[i]) && !fail() {
				return false
			}
		}
	}
	if unique, _ := s.get("uniqueItems"); unique == true && hasDuplicates(value) {
		ctx.add("uniqueItems", path, "must not have duplicate items")
		fail()
	}
	return ok
}

// countMatching counts the items that match schema; with firstOnly it stops
// at the first, as the compiled `contains` does.
func (c *checker) countMatching(ctx *errCtx, schema any, value []any, firstOnly bool) int {
	n := 0
	for _, item := range value {
		if c.validate(ctx.check(), schema, "", item) {
			n++
			if firstOnly {
				break
			}
		}
	}
	return n
}

func (c *checker) stringKeywords(ctx *errCtx, s *jsObject, path string, value string) bool {
	ok := true
	units, points := utf16Length(value), utf8.RuneCountInString(value)
	// TypeBox counts code points, with a shortcut on the UTF-16 length whose
	// `limit << 1` truncates to int32 like any JavaScript shift.
	if limit, isNum := numberKeyword(s, "minLength"); isNum {
		if !(float64(units) >= float64(shiftLeft1(limit)) || (float64(units) >= limit && float64(points) >= limit)) {
			ok = ctx.add("minLength", path, "must not have fewer than "+jsNumberString(limit)+" characters")
		}
	}
	if limit, isNum := numberKeyword(s, "maxLength"); isNum {
		if !(float64(units) <= limit || (float64(units) <= float64(shiftLeft1(limit)) && float64(points) <= limit)) {
			ok = ctx.add("maxLength", path, "must not have more than "+jsNumberString(limit)+" characters")
		}
	}
	if format, isFormat := stringKeyword(s, "format"); isFormat {
		if check := formatCheckers[format]; check != nil && !check(value) {
			ok = ctx.add("format", path, `must match format "`+format+`"`)
		}
	}
	if pattern, isPattern := stringKeyword(s, "pattern"); isPattern {
		if re := c.cs.pattern(pattern); re != nil && !re.MatchString(value) {
			ok = ctx.add("pattern", path, `must match pattern "`+pattern+`"`)
		}
	}
	return ok
}

func utf16Length(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// shiftLeft1 is JavaScript's `x << 1`.
func shiftLeft1(f float64) int32 {
	return int32(uint32(toInt32(f)) << 1)
}

func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	m := math.Mod(math.Trunc(f), 1<<32)
	if m < 0 {
		m += 1 << 32
	}
	return int32(uint32(m))
}

func numberKeywords(ctx *errCtx, s *jsObject, path string, value float64) bool {
	ok := true
	if limit, isNum := numberKeyword(s, "exclusiveMinimum"); isNum && !(value > limit) {
		ok = ctx.add("exclusiveMinimum", path, "must be > "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "exclusiveMaximum"); isNum && !(value < limit) {
		ok = ctx.add("exclusiveMaximum", path, "must be < "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "minimum"); isNum && !(value >= limit) {
		ok = ctx.add("minimum", path, "must be >= "+jsNumberString(limit))
	}
	if limit, isNum := numberKeyword(s, "maximum"); isNum && !(value <= limit) {
		ok = ctx.add("maximum", path, "must be <= "+jsNumberString(limit))
	}
	if divisor, isNum := numberKeyword(s, "multipleOf"); isNum && !isMultipleOf(value, divisor) {
		ok = ctx.add("multipleOf", path, "must be multiple of "+jsNumberString(divisor))
	}
	return ok
}

// isMultipleOf is TypeBox's Guard.IsMultipleOf, tolerance included.
func isMultipleOf(dividend, divisor float64) bool {
	if isJSInteger(dividend) && math.Mod(1/divisor, 1) == 0 {
		return true
	}
	mod := math.Mod(dividend, divisor)
	least := math.Min(math.Abs(mod), math.Min(math.Abs(mod-divisor), math.Abs(mod+divisor)))
	return least < 1e-10
}

func (c *checker) applicators(ctx *errCtx, s *jsObject, path string, value any) bool {
	ok := true
	fail := func() bool {
		ok = false
		return !ctx.short()
	}
	if ref, isRef := stringKeyword(s, "$ref"); isRef {
		target := c.resolveRef(ref)
		next := ctx.child()
		// The generated code accepts a $ref to an array, the interpreter
		// (and so Errors) rejects it without an error, which is how pi can
		// end up with "Unknown validation error".
		if _, isArray := target.([]any); isArray && ctx.mode != compiledCheck {
			target = false
			next = &errCtx{mode: interpretedCheck}
		}
		if !c.validate(next, target, path, value) {
			ctx.addAll(next.errs)
			if !fail() {
				return false
			}
		}
	}
	if constant, isConst := s.get("const"); isConst && !jsDeepEqual(value, constant) {
		ctx.add("const", path, "must be equal to constant")
		if !fail() {
			return false
		}
	}
	if options, isEnum := s.vals["enum"].([]any); isEnum {
		found := false
		for _, option := range options {
			found = found || jsDeepEqual(value, option)
		}
		if !found {
			ctx.add("enum", path, "must be equal to one of the allowed values")
			if !fail() {
				return false
			}
		}
	}
	if cond, isIf := schemaKeyword(s, "if"); isIf && !c.ifKeyword(ctx, s, cond, path, value) && !fail() {
		return false
	}
	if not, isNot := schemaKeyword(s, "not"); isNot && c.validate(ctx.check(), not, path, value) {
		ctx.add("not", path, "must not be valid")
		if !fail() {
			return false
		}
	}
	if list, isAllOf := schemaListKeyword(s, "allOf"); isAllOf {
		if passed, failed := c.members(ctx, list, path, value, "allOf"); passed != len(list) {
			ctx.addAll(failed)
			if !fail() {
				return false
			}
		}
	}
	if list, isAnyOf := schemaListKeyword(s, "anyOf"); isAnyOf {
		if passed, failed := c.members(ctx, list, path, value, "anyOf"); passed == 0 {
			ctx.addAll(failed)
			ctx.add("anyOf", path, "must match a schema in anyOf")
			if !fail() {
				return false
			}
		}
	}
	if list, isOneOf := schemaListKeyword(s, "oneOf"); isOneOf {
		if passed, failed := c.members(ctx, list, path, value, "oneOf"); passed != 1 {
			if passed == 0 {
				ctx.addAll(failed)
			}
			ctx.add("oneOf", path, "must match exactly one schema in oneOf")
			fail()
		}
	}
	return ok
}

// members evaluates each schema in its own context and returns how many
// passed and the errors of those that failed, in order. The compiled check
// stops anyOf at the first pass and allOf at the first failure; everything
// else looks at every member.
func (c *checker) members(ctx *errCtx, list []any, path string, value any, keyword string) (int, []schemaError) {
	passed := 0
	var failed []schemaError
	for _, member := range list {
		next := ctx.child()
		if c.validate(next, member, path, value) {
			passed++
			if keyword == "anyOf" && ctx.mode == compiledCheck {
				break
			}
		} else {
			failed = append(failed, next.errs...)
			if keyword == "allOf" && ctx.mode == compiledCheck {
				break
			}
		}
	}
	return passed, failed
}

// ifKeyword keeps TypeBox's asymmetry: errors of a failing "then" are
// dropped, errors of a failing "else" are kept.
func (c *checker) ifKeyword(ctx *errCtx, s *jsObject, cond any, path string, value any) bool {
	thenSchema, hasThen := schemaKeyword(s, "then")
	if !hasThen {
		thenSchema = true
	}
	elseSchema, hasElse := schemaKeyword(s, "else")
	if !hasElse {
		elseSchema = true
	}
	trueCtx := ctx.child()
	if c.validate(trueCtx, cond, path, value) {
		return c.validate(trueCtx, thenSchema, path, value) || ctx.add("if", path, `must match "then" schema`)
	}
	return c.validate(ctx, elseSchema, path, value) || ctx.add("if", path, `must match "else" schema`)
}

// resolveRef finds a local $ref ("#" or "#/json/pointer") the way TypeBox's
// Resolve.Ref does for a schema without $id: the pointer is tried on the root,
// then on every schema object below it, the last match winning. Anything not
// found is the schema false.
func (c *checker) resolveRef(ref string) any {
	target, found := lookupRef(c.root, ref)
	if !found || target == nil {
		return false
	}
	return target
}

func lookupRef(root any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#") {
		return nil, false
	}
	if ref == "#" {
		return root, true
	}
	fragment, err := decodeURIComponent(ref[1:])
	if err != nil || !strings.HasPrefix(fragment, "/") {
		return nil, false
	}
	var tokens []string
	for _, t := range strings.Split(fragment, "/")[1:] {
		tokens = append(tokens, strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~"))
	}
	return matchPointer(root, tokens)
}

func matchPointer(node any, tokens []string) (any, bool) {
	if _, isObj := node.(*jsObject); isObj {
		if v, ok := pointerGet(node, tokens); ok && v != nil {
			return v, true
		}
	}
	var result any
	found := false
	switch n := node.(type) {
	case []any:
		for _, item := range n {
			if v, ok := matchPointer(item, tokens); ok {
				result, found = v, true
			}
		}
	case *jsObject:
		for _, key := range n.keys {
			if key == "const" || key == "enum" {
				continue
			}
			if v, ok := matchPointer(n.vals[key], tokens); ok {
				result, found = v, true
			}
		}
	}
	return result, found
}

func pointerGet(node any, tokens []string) (any, bool) {
	current := node
	for _, t := range tokens {
		if t == "__proto__" || t == "constructor" || t == "prototype" {
			return nil, false
		}
		switch n := current.(type) {
		case *jsObject:
			v, ok := n.vals[t]
			if !ok {
				return nil, false
			}
			current = v
		case []any:
			if t == "length" {
				current = float64(len(n))
				continue
			}
			i, ok := arrayIndex(t)
			if !ok || i >= uint64(len(n)) {
				return nil, false
			}
			current = n[i]
		default:
			return nil, false
		}
	}
	return current, true
}

// decodeURIComponent fails, as JavaScript's does, on a bad escape or on
// escapes that are not UTF-8.
func decodeURIComponent(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", jsThrow("URI malformed")
		}
		n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
		b.WriteByte(byte(n))
		i += 2
	}
	if !utf8.ValidString(b.String()) {
		return "", jsThrow("URI malformed")
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// jsDeepEqual is TypeBox's Guard.IsDeepEqual(value, schemaValue), used by
// const and enum. A schema array seen as an object has a "length" key, so
// {"length":0} equals [] exactly as in TypeBox.
func jsDeepEqual(value, want any) bool {
	switch v := value.(type) {
	case []any:
		w, ok := want.([]any)
		if !ok || len(w) != len(v) {
			return false
		}
		for i := range v {
			if !jsDeepEqual(v[i], w[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		switch w := want.(type) {
		case *jsObject:
			if len(w.keys) != len(v) {
				return false
			}
			for key, item := range v {
				other, ok := w.vals[key]
				if !ok || !jsDeepEqual(item, other) {
					return false
				}
			}
			return true
		case []any:
			if len(w)+1 != len(v) {
				return false
			}
			for key, item := range v {
				other, ok := pointerGet(w, []string{key})
				if !ok || !jsDeepEqual(item, other) {
					return false
				}
			}
			return true
		}
		return false
	default:
		return jsStrictEqual(value, want)
	}
}

func jsStrictEqual(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	}
	return false
}

// hasDuplicates mirrors uniqueItems, which compares FNV-1a hashes of
// TypeBox's value encoding. Comparing the encodings themselves gives the same
// answer short of a hash collision, including its quirks: 0 and -0 differ,
// and an object's "constructor" key is not encoded.
func hasDuplicates(items []any) bool {
	seen := map[string]bool{}
	for _, item := range items {
		var b []byte
		b = appendHashInput(b, item)
		if seen[string(b)] {
			return true
		}
		seen[string(b)] = true
	}
	return false
}

func appendHashInput(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 0x06)
	case bool:
		if x {
			return append(b, 0x02, 1)
		}
		return append(b, 0x02, 0)
	case float64:
		b = append(b, 0x07)
		return binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	case string:
		return append(append(b, 0x0A), []byte(strings.ToValidUTF8(x, "\uFFFD"))...)
	case []any:
		b = append(b, 0x00)
		for _, item := range x {
			b = appendHashInput(b, item)
		}
		return b
	case map[string]any:
		b = append(b, 0x08)
		keys := make([]string, 0, len(x))
		for k := range x {
			if k != "constructor" {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool { return utf16Less(keys[i], keys[j]) })
		for _, k := range keys {
			b = appendHashInput(b, k)
			b = appendHashInput(b, x[k])
		}
		return b
	}
	return b
}

// jsKeys is the order JavaScript gives an object's keys: array indexes
// ascending, then the rest. A Go map has no insertion order, so the rest are
// sorted (by UTF-16 code units, like Array.prototype.sort).
func jsKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, aIndex := arrayIndex(keys[i])
		b, bIndex := arrayIndex(keys[j])
		if aIndex && bIndex {
			return a < b
		}
		if aIndex != bIndex {
			return aIndex
		}
		return utf16Less(keys[i], keys[j])
	})
	return keys
}

// arrayIndex reports whether key is a JavaScript array index: a canonical
// decimal below 2^32-1.
func arrayIndex(key string) (uint64, bool) {
	if key == "" || len(key) > 10 || (len(key) > 1 && key[0] == '0') {
		return 0, false
	}
	n, err := strconv.ParseUint(key, 10, 64)
	if err != nil || n >= 1<<32-1 {
		return 0, false
	}
	return n, true
}

func utf16Less(a, b string) bool {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			return ua[i] < ub[i]
		}
	}
	return len(ua) < len(ub)
}

// describeNonSchema is how V8 prints a primitive in the TypeError TypeBox
// throws when a $ref lands on one.
func describeNonSchema(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return jsNumberString(x)
	}
	return fmt.Sprint(v)
}

// jsSpaces is what \s matches in a JavaScript regular expression; Go's \s is
// ASCII only.
const jsSpaces = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// jsPatternToGo translates a JavaScript pattern, compiled by TypeBox with the
// u flag, to RE2 syntax. Syntax the u flag rejects is an error. So is what
// RE2 cannot run (lookaround, backreferences), unless syntaxOnly: then they
// become empty groups, which is enough to tell whether JavaScript would
// accept the pattern (the regex format).
func jsPatternToGo(p string, syntaxOnly bool) (string, error) {
	groups, names := countGroups(p)
	var b strings.Builder
	// lookaround holds, per open group, whether it is an assertion; an
	// assertion, like ^ and $, cannot take a quantifier under the u flag.
	var lookaround []bool
	assertion := false
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		if strings.ContainsRune("*+?{", r) && assertion {
			return "", errors.New("nothing to repeat")
		}
		assertion = false
		switch {
		case r == '\\':
			n, out, err := translateEscape(p[i:], false, groups, names, syntaxOnly)
			if err != nil {
				return "", err
			}
			assertion = out == `\b` || out == `\B`
			b.WriteString(out)
			i += n
			continue
		case r == '[':
			switch {
			case strings.HasPrefix(p[i:], "[]"):
				b.WriteString(`[^\x{0}-\x{10FFFF}]`)
				i += 2
				continue
			case strings.HasPrefix(p[i:], "[^]"):
				b.WriteString(`[\x{0}-\x{10FFFF}]`)
				i += 3
				continue
			}
			start := i + 1
			if strings.HasPrefix(p[start:], "^") {
				start++
			}
			n, out, err := translateClassAtoms(p[start:], groups, names, syntaxOnly)
			if err != nil {
				return "", err
			}
			b.WriteString(p[i:start] + out)
			i = start + n
			continue
		case r == ']' || r == '}':
			return "", errors.New("lone quantifier bracket")
		case r == '{':
			m := braceQuantifier.FindString(p[i:])
			if m == "" {
				return "", errors.New("lone quantifier bracket")
			}
			b.WriteString(m)
			i += len(m)
			continue
		case r == '^' || r == '$':
			assertion = true
			b.WriteRune(r)
		case r == '.':
			b.WriteString(`[^\n\r\x{2028}\x{2029}]`)
		case r == '(':
			rest := p[i:]
			switch {
			case strings.HasPrefix(rest, "(?:"):
				lookaround = append(lookaround, false)
				b.WriteString("(?:")
				i += 3
			case strings.HasPrefix(rest, "(?=") || strings.HasPrefix(rest, "(?!"):
				if !syntaxOnly {
					return "", errors.New("lookahead is not supported")
				}
				lookaround = append(lookaround, true)
				b.WriteString("(?:")
				i += 3
			case strings.HasPrefix(rest, "(?<=") || strings.HasPrefix(rest, "(?<!"):
				if !syntaxOnly {
					return "", errors.New("lookbehind is not supported")
				}
				lookaround = append(lookaround, true)
				b.WriteString("(?:")
				i += 4
			case strings.HasPrefix(rest, "(?<"):
				lookaround = append(lookaround, false)
				b.WriteString("(?P<")
				i += 3
			case strings.HasPrefix(rest, "(?"):
				return "", errors.New("invalid group")
			default:
				lookaround = append(lookaround, false)
				b.WriteByte('(')
				i++
			}
			continue
		case r == ')':
			if len(lookaround) > 0 {
				assertion = lookaround[len(lookaround)-1]
				lookaround = lookaround[:len(lookaround)-1]
			}
			b.WriteByte(')')
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String(), nil
}

// translateClassAtoms translates the inside of a character class up to and
// including its closing bracket. Under the u flag a range may not have a
// class escape (\d, \w, \s, \p{..}) as an end.
func translateClassAtoms(s string, groups int, names map[string]bool, syntaxOnly bool) (int, string, error) {
	var b strings.Builder
	i := 0
	atom := func() (string, bool, error) {
		if s[i] == '\\' {
			n, out, err := translateEscape(s[i:], true, groups, names, syntaxOnly)
			if err != nil {
				return "", false, err
			}
			isClass := strings.ContainsRune("dDwWsSpP", rune(s[i+1]))
			i += n
			return out, isClass, nil
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r == '[' {
			return `\[`, false, nil
		}
		return string(r), false, nil
	}
	for i < len(s) {
		if s[i] == ']' {
			b.WriteByte(']')
			return i + 1, b.String(), nil
		}
		first, firstIsClass, err := atom()
		if err != nil {
			return 0, "", err
		}
		b.WriteString(first)
		if i+1 < len(s) && s[i] == '-' && s[i+1] != ']' {
			i++
			second, secondIsClass, err := atom()
			if err != nil {
				return 0, "", err
			}
			if firstIsClass || secondIsClass {
				return 0, "", errors.New("invalid character class range")
			}
			b.WriteString("-" + second)
		}
	}
	return 0, "", errors.New("unterminated character class")
}

var braceQuantifier = regexp.MustCompile(`^\{[0-9]+(?:,[0-9]*)?\}`)

// countGroups counts the capturing groups of a pattern and collects their
// names, which decide whether a backreference is valid.
func countGroups(p string) (int, map[string]bool) {
	n, names := 0, map[string]bool{}
	inClass := false
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\':
			i++
		case inClass:
			inClass = c != ']'
		case c == '[':
			inClass = true
		case c == '(' && !strings.HasPrefix(p[i:], "(?"):
			n++
		case strings.HasPrefix(p[i:], "(?<") && !strings.HasPrefix(p[i:], "(?<=") && !strings.HasPrefix(p[i:], "(?<!"):
			n++
			if end := strings.IndexByte(p[i:], '>'); end > 0 {
				names[p[i+3:i+end]] = true
			}
		}
	}
	return n, names
}

// translateEscape translates the escape at the start of s and returns how
// many bytes it used.
func translateEscape(s string, inClass bool, groups int, names map[string]bool, syntaxOnly bool) (int, string, error) {
	if len(s) < 2 {
		return 0, "", errors.New(`\ at end of pattern`)
	}
	c := s[1]
	switch {
	case strings.IndexByte("dDwW", c) >= 0:
		return 2, s[:2], nil
	case c == 'b' && inClass:
		return 2, `\x{8}`, nil
	case c == 'b' || (c == 'B' && !inClass):
		return 2, s[:2], nil
	case c == 's' && inClass:
		return 2, jsSpaces, nil
	case c == 's':
		return 2, "[" + jsSpaces + "]", nil
	case c == 'S' && inClass:
		return 2, `\S`, nil
	case c == 'S':
		return 2, "[^" + jsSpaces + "]", nil
	case strings.IndexByte("tnrfv", c) >= 0:
		return 2, s[:2], nil
	case c == '0' && (len(s) == 2 || s[2] < '0' || s[2] > '9'):
		return 2, `\x{0}`, nil
	case c == 'c' && len(s) > 2 && (s[2]|0x20) >= 'a' && (s[2]|0x20) <= 'z':
		return 3, fmt.Sprintf(`\x{%x}`, s[2]%32), nil
	case c == 'x' && len(s) >= 4 && isHex(s[2]) && isHex(s[3]):
		return 4, `\x{` + s[2:4] + `}`, nil
	case c == 'u':
		return translateUnicodeEscape(s)
	case c == 'p' || c == 'P':
		end := strings.IndexByte(s, '}')
		if len(s) < 4 || s[2] != '{' || end < 0 {
			return 0, "", errors.New(`invalid \p escape`)
		}
		name := s[3:end]
		if _, value, found := strings.Cut(name, "="); found {
			name = value
		}
		return end + 1, `\` + string(c) + "{" + name + "}", nil
	case c == 'k' && !inClass:
		end := strings.IndexByte(s, '>')
		if len(s) < 4 || s[2] != '<' || end < 0 || !names[s[3:end]] {
			return 0, "", errors.New("invalid named reference")
		}
		if !syntaxOnly {
			return 0, "", errors.New("backreferences are not supported")
		}
		return end + 1, "(?:)", nil
	case '1' <= c && c <= '9' && !inClass:
		digits := 1
		for digits+1 < len(s) && '0' <= s[digits+1] && s[digits+1] <= '9' {
			digits++
		}
		if n, err := strconv.Atoi(s[1 : 1+digits]); err != nil || n > groups {
			return 0, "", errors.New("invalid escape")
		}
		if !syntaxOnly {
			return 0, "", errors.New("backreferences are not supported")
		}
		return 1 + digits, "(?:)", nil
	case strings.IndexByte(`^$\.*+?()[]{}|/`, c) >= 0 || (c == '-' && inClass):
		return 2, s[:2], nil
	}
	return 0, "", fmt.Errorf(`invalid escape \%c`, c)
}

func translateUnicodeEscape(s string) (int, string, error) {
	if strings.HasPrefix(s, `\u{`) {
		end := strings.IndexByte(s, '}')
		if end < 0 {
			return 0, "", errors.New(`invalid \u escape`)
		}
		return end + 1, `\x{` + s[3:end] + `}`, nil
	}
	high, ok := hex4(s, 2)
	if !ok {
		return 0, "", errors.New(`invalid \u escape`)
	}
	if utf16.IsSurrogate(rune(high)) && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if low, ok := hex4(s, 8); ok {
			if r := utf16.DecodeRune(rune(high), rune(low)); r != utf8.RuneError {
				return 12, fmt.Sprintf(`\x{%x}`, r), nil
			}
		}
	}
	return 6, fmt.Sprintf(`\x{%x}`, high), nil
}

func hex4(s string, at int) (uint64, bool) {
	if len(s) < at+4 {
		return 0, false
	}
	n, err := strconv.ParseUint(s[at:at+4], 16, 32)
	return n, err == nil
}

// formatCheckers are TypeBox's built-in formats (typebox/build/format). The
// regular expressions are TypeBox's; the /i ones use (?i), which in Go also
// folds U+212A and U+017F onto k and s. Formats TypeBox checks with
// URL.canParse (url, iri, iri-reference) or IDNA tables (hostname punycode
// labels, idn-hostname) are approximated. Unknown formats pass, as in TypeBox.
var formatCheckers = map[string]func(string) bool{
	"date":                      isDate,
	"date-time":                 isDateTime,
	"duration":                  regexp.MustCompile("^P((\\d+Y(\\d+M(\\d+D)?)?|\\d+M(\\d+D)?|\\d+D)(T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S))?|T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S)|\\d+W)$").MatchString,
	"email":                     regexp.MustCompile("(?i)^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\"(?:[^\"\\\\]|\\\\[\\x20-\\x7e])*\")@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\\[(?:IPv6:[a-f0-9:]+|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})\\])$").MatchString,
	"hostname":                  isHostname,
	"idn-email":                 isIdnEmail,
	"idn-hostname":              isIdnHostname,
	"ipv4":                      regexp.MustCompile("^(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$").MatchString,
	"ipv6":                      regexp.MustCompile("(?i)^(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:)?[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)$").MatchString,
	"iri":                       isIri,
	"iri-reference":             isIriReference,
	"json-pointer":              regexp.MustCompile("^(?:\\/(?:[^~/]|~0|~1)*)*$").MatchString,
	"json-pointer-uri-fragment": regexp.MustCompile("(?i)^#(?:\\/(?:[a-z0-9_\\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$").MatchString,
	"regex":                     isRegex,
	"relative-json-pointer":     regexp.MustCompile("^(?:0|[1-9][0-9]*)(?:#|(?:\\/(?:[^~/]|~0|~1)*)*)$").MatchString,
	"time":                      isTime,
	"uri":                       regexp.MustCompile("(?i)^[a-z][a-z0-9+\\-.]*:(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:[\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,1}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,2}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\da-f]{1,4})?::[\\da-f]{1,4}:(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}:){0,6}[\\da-f]{1,4})?::)|v[0-9a-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\\?(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$").MatchString,
	"uri-reference":             regexp.MustCompile("(?i)^(?:[a-z][a-z0-9+\\-.]*:(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:[\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,1}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,2}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\da-f]{1,4})?::[\\da-f]{1,4}:(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}:){0,6}[\\da-f]{1,4})?::)|v[0-9a-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:\\/\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:[\\da-f]{1,4}:){6}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|::(?:[\\da-f]{1,4}:){5}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){4}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,1}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){3}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,2}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:){2}(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,3}[\\da-f]{1,4})?::[\\da-f]{1,4}:(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,4}[\\da-f]{1,4})?::(?:[\\da-f]{1,4}:[\\da-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d))|(?:(?:[\\da-f]{1,4}:){0,5}[\\da-f]{1,4})?::[\\da-f]{1,4}|(?:(?:[\\da-f]{1,4}:){0,6}[\\da-f]{1,4})?::)|v[0-9a-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[-a-z0-9._~!$&'()*+,;=@]|%[0-9a-f]{2})+(?:\\/(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?)(?:\\?(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?$").MatchString,
	"uri-template":              regexp.MustCompile("(?i)^(?:(?:[^\\x00-\\x20\"<>%\\\\^`{|}\\x7f]|%[0-9a-f]{2})|\\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?)*\\})*$").MatchString,
	"url":                       isURL,
	"uuid":                      regexp.MustCompile("(?i)^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$").MatchString,
}

var (
	dateRE            = regexp.MustCompile(`^(\d\d\d\d)-(\d\d)-(\d\d)$`)
	timeRE            = regexp.MustCompile(`^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))?$`)
	dateTimeSplitRE   = regexp.MustCompile(`[Tt]`)
	dateTimeSuffixRE  = regexp.MustCompile(`^(?:\[!?(?:([A-Za-z._][A-Za-z._0-9+-]{0,13}(?:/[A-Za-z._][A-Za-z._0-9+-]{0,13})*)|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])\](?:\[!?[a-z_][a-z_0-9-]*=[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\])*|(?:\[!?[a-z_][a-z_0-9-]*=[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\])*)$`)
	asciiLabelRE      = regexp.MustCompile(`^[a-zA-Z0-9-]*$`)
	idnEmailRE        = regexp.MustCompile(`(?i)^(?:[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~\x{80}-\x{10FFFF}-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_\x60{|}~\x{80}-\x{10FFFF}-]+)*|"(?:[^"\\]|\\[^\n\r\x{2028}\x{2029}])*")@[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?)*$`)
	invalidIriRE      = regexp.MustCompile(`[\x00-\x20<>\^\x60{|}\\]|%(?:[^0-9a-fA-F]|.[^0-9a-fA-F]|.?$)`)
	invalidIriRefRE   = regexp.MustCompile(`[\x00-\x20\x7F\\]|%(?:[^0-9a-fA-F]|.[^0-9a-fA-F]|.?$)`)
	malformedSchemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+\-.]*//`)
)

var daysInMonth = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func isDate(s string) bool {
	m := dateRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	year, _ := strconv.Atoi(m[1])
	month, _ := strconv.Atoi(m[2])
	day, _ := strconv.Atoi(m[3])
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	leap := year%4 == 0 && (year%100 != 0 || year%400 == 0)
	if month == 2 && leap {
		return day <= 29
	}
	return day <= daysInMonth[month]
}

func isTime(s string) bool {
	m := timeRE.FindStringSubmatch(s)
	if m == nil || (m[4] == "" && m[5] == "") {
		return false
	}
	hr, _ := strconv.Atoi(m[1])
	min, _ := strconv.Atoi(m[2])
	sec, _ := strconv.Atoi(m[3])
	if hr > 23 || min > 59 || sec > 60 {
		return false
	}
	tzH, _ := strconv.Atoi(m[6])
	tzM, _ := strconv.Atoi(m[7])
	if m[5] != "" && (tzH > 23 || tzM > 59) {
		return false
	}
	if sec < 60 {
		return true
	}
	// A leap second must fall on 23:59:60 UTC.
	sign := 1
	if m[5] == "-" {
		sign = -1
	}
	utc := (hr*60 + min) - sign*(tzH*60+tzM)
	return (utc%1440+1440)%1440 == 1439
}

func isDateTime(s string) bool {
	datetime := s
	if i := strings.IndexByte(s, '['); i >= 0 {
		datetime = s[:i]
		m := dateTimeSuffixRE.FindStringSubmatch(s[i:])
		if m == nil {
			return false
		}
		// TypeBox's expression forbids "." and ".." time zone segments with
		// a lookahead, which RE2 lacks.
		for _, seg := range strings.Split(m[1], "/") {
			if m[1] != "" && (seg == "." || seg == "..") {
				return false
			}
		}
	}
	parts := dateTimeSplitRE.Split(datetime, -1)
	return len(parts) == 2 && isDate(parts[0]) && isTime(parts[1])
}

func isHostname(s string) bool {
	n := utf16Length(s)
	if n == 0 || n > 253 || strings.HasSuffix(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !isHostnameLabel(label) {
			return false
		}
	}
	return true
}

func isHostnameLabel(label string) bool {
	if n := utf16Length(label); n == 0 || n > 63 {
		return false
	}
	if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
		// TypeBox then checks the decoded label against the IDNA tables;
		// that part is not ported, any decodable non-ASCII label passes.
		body := strings.ToLower(label[4:])
		decoded, ok := punycodeDecode(body)
		return ok && strings.LastIndexByte(body, '-') != 0 && strings.IndexFunc(decoded, func(r rune) bool { return r >= 0x80 }) >= 0
	}
	return !strings.HasPrefix(label, "-") && !strings.HasSuffix(label, "-") &&
		!(len(label) >= 4 && label[2:4] == "--") && asciiLabelRE.MatchString(label)
}

// punycodeDecode is TypeBox's RFC 3492 decoder, lowercase digits only.
func punycodeDecode(s string) (string, bool) {
	const base, tmin, tmax, maxRune = 36, 1, 26, 0x10FFFF
	var out []rune
	delim := strings.LastIndexByte(s, '-')
	for j := 0; j < delim; j++ {
		if s[j] >= 0x80 {
			return "", false
		}
		out = append(out, rune(s[j]))
	}
	n, i, bias := 128, 0, 72
	for in := delim + 1; in < len(s); {
		oldi, w := i, 1
		for k := base; ; k += base {
			if in >= len(s) {
				return "", false
			}
			ch := s[in]
			in++
			var digit int
			switch {
			case 'a' <= ch && ch <= 'z':
				digit = int(ch - 'a')
			case '0' <= ch && ch <= '9':
				digit = int(ch-'0') + 26
			default:
				return "", false
			}
			i += digit * w
			if i > (maxRune+1)*(len(out)+1) {
				// n would pass the last code point: fromCodePoint throws.
				return "", false
			}
			t := k - bias
			if k <= bias {
				t = tmin
			} else if k >= bias+tmax {
				t = tmax
			}
			if digit < t {
				break
			}
			w *= base - t
		}
		size := len(out) + 1
		bias = punycodeAdapt(i-oldi, size, oldi == 0)
		n += i / size
		i %= size
		if n > maxRune {
			return "", false
		}
		out = append(out[:i], append([]rune{rune(n)}, out[i:]...)...)
		i++
	}
	return string(out), true
}

func punycodeAdapt(delta, points int, first bool) int {
	if first {
		delta /= 700
	} else {
		delta >>= 1
	}
	delta += delta / points
	k := 0
	for delta > (36-1)*26/2 {
		delta /= 36 - 1
		k += 36
	}
	return k + (36-1+1)*delta/(delta+38)
}

// isIdnHostname approximates TypeBox's IDNA check: labels of letters,
// digits and hyphens, with the ASCII rules for ASCII labels.
func isIdnHostname(s string) bool {
	if s == "" || strings.Contains(s, " ") {
		return false
	}
	normalized := strings.NewReplacer("\u3002", ".", "\uff0e", ".", "\uff61", ".").Replace(s)
	if utf16Length(normalized) > 253 {
		return false
	}
	for _, label := range strings.Split(normalized, ".") {
		if n := utf16Length(label); n == 0 || n > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, r := range label {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.M, r) {
				return false
			}
		}
	}
	return true
}

// isIdnEmail is TypeBox's expression with its (?<!-) lookbehinds rewritten;
// TypeBox also NFC-normalizes first, which this skips.
func isIdnEmail(s string) bool { return idnEmailRE.MatchString(s) }

// isURL approximates URL.canParse: an absolute URL with a scheme.
func isURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	return err == nil && u.Scheme != ""
}

func isIri(s string) bool {
	return !invalidIriRE.MatchString(s) && isURL(s)
}

func isIriReference(s string) bool {
	if invalidIriRefRE.MatchString(s) || malformedSchemeRE.MatchString(s) {
		return false
	}
	_, err := url.Parse(s)
	return err == nil
}

func isRegex(s string) bool {
	translated, err := jsPatternToGo(s, true)
	if err != nil {
		return false
	}
	_, err = regexp.Compile(translated)
	return err == nil
}
