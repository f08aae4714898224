package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// ValidateArguments returns the arguments coerced and validated against schema, exactly as
// pi-ai's validateToolArguments does for a plain JSON-schema object (TypeBox Value.Convert, then
// the AJV-style coercion, then the check). args is never mutated. On failure the error's
// message is pi's text: `Validation failed for tool "<name>":\n  - <path>: <message>\n...\n\nReceived arguments:\n<JSON.stringify(args, null, 2)>`.
//
// A nil, empty or null schema means {"type":"object","properties":{}}. A
// schema that is not a JSON object, or that pi could not compile either,
// gives an error naming the tool. Where pi throws a JavaScript error (a null
// sub-schema, a $ref cycle) the error carries the same message.
func ValidateArguments(toolName string, schema json.RawMessage, args map[string]any) (map[string]any, error) {
	cs, err := loadSchema(schema)
	var thrown jsThrow
	if errors.As(err, &thrown) {
		return nil, thrown
	}
	if err != nil {
		return nil, fmt.Errorf("tool %q: invalid parameters schema: %w", toolName, err)
	}
	received, err := normalizeArgs(args)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", toolName, err)
	}
	// pi first runs TypeBox's Value.Convert. It converts only TypeBox types,
	// which carry a "~kind" marker that never survives JSON, so for a plain
	// JSON schema it changes nothing and is not ported.
	work := cloneJSON(received).(map[string]any)
	coerced, err := cs.coerce(work, cs.root)
	if err != nil {
		return nil, err
	}
	if m, ok := coerced.(map[string]any); ok {
		work = m
	}
	c := &checker{cs: cs, root: cs.root}
	valid, errs, err := c.run(work, true)
	if err != nil {
		return nil, err
	}
	if valid {
		return work, nil
	}
	return nil, errors.New(validationMessage(toolName, errs, received))
}

func validationMessage(toolName string, errs []schemaError, received map[string]any) string {
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

// compiledSchema is a parsed schema, shared by every call that passes the
// same schema bytes.
type compiledSchema struct {
	root any
	// regexps holds every pattern reachable from an analysed root, already
	// translated and compiled.
	regexps sync.Map // string -> *regexp.Regexp
	// members remembers, per union member, whether pi could compile it on
	// its own (nil) or not (the error).
	members sync.Map // *jsObject -> error
}

func (cs *compiledSchema) pattern(p string) *regexp.Regexp {
	re, _ := cs.regexps.Load(p)
	r, _ := re.(*regexp.Regexp)
	return r
}

const maxCachedSchemas = 1024

var (
	schemaCache     sync.Map // string(schema bytes) -> *compiledSchema
	schemaCacheSize atomic.Int64
)

func loadSchema(raw json.RawMessage) (*compiledSchema, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte(`{"type":"object","properties":{}}`)
	}
	key := string(trimmed)
	if cs, ok := schemaCache.Load(key); ok {
		return cs.(*compiledSchema), nil
	}
	root, err := parseOrdered(trimmed)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, ok := root.(*jsObject); !ok {
		return nil, errors.New("not a JSON object")
	}
	cs := &compiledSchema{root: root}
	if err := cs.analyze(root, root, map[*jsObject]bool{}); err != nil {
		return nil, err
	}
	// Schemas come from a fixed set of tools; the bound only keeps a caller
	// that builds schemas on the fly from growing the cache forever.
	if schemaCacheSize.Load() < maxCachedSchemas {
		if _, loaded := schemaCache.LoadOrStore(key, cs); !loaded {
			schemaCacheSize.Add(1)
		}
	}
	return cs, nil
}

// analyze does what TypeBox's Compile does before seeing any value: it
// walks the schemas reachable from root through keywords and $refs,
// compiling patterns and resolving references, and fails where Compile
// throws. Unreachable parts ($defs nobody uses) are not looked at.
func (cs *compiledSchema) analyze(root, node any, seen map[*jsObject]bool) error {
	s, ok := node.(*jsObject)
	if !ok || seen[s] {
		return nil
	}
	seen[s] = true
	var subschemas []any
	add := func(key string) {
		if v, ok := schemaKeyword(s, key); ok {
			subschemas = append(subschemas, v)
		}
	}
	addAll := func(list []any, ok bool) {
		if ok {
			subschemas = append(subschemas, list...)
		}
	}
	addMap := func(m *jsObject, ok bool) {
		if ok {
			for _, k := range m.keys {
				subschemas = append(subschemas, m.vals[k])
			}
		}
	}
	add("additionalProperties")
	if deps, ok := dependenciesKeyword(s); ok {
		for _, k := range deps.keys {
			if isSchema(deps.vals[k]) {
				subschemas = append(subschemas, deps.vals[k])
			}
		}
	}
	addMap(schemaMapKeyword(s, "dependentSchemas"))
	if patterns, ok := schemaMapKeyword(s, "patternProperties"); ok {
		for _, p := range patterns.keys {
			if err := cs.addPattern(p); err != nil {
				return err
			}
		}
		addMap(patterns, true)
	}
	addMap(schemaMapKeyword(s, "properties"))
	add("propertyNames")
	if tuple, ok := schemaListKeyword(s, "items"); ok {
		addAll(tuple, ok)
		add("additionalItems")
	}
	add("contains")
	add("items")
	addAll(schemaListKeyword(s, "prefixItems"))
	if p, ok := stringKeyword(s, "pattern"); ok {
		if err := cs.addPattern(p); err != nil {
			return err
		}
	}
	if ref, ok := stringKeyword(s, "$ref"); ok {
		target, err := refTarget(root, ref)
		if err != nil {
			return err
		}
		subschemas = append(subschemas, target)
	}
	if _, ok := schemaKeyword(s, "if"); ok {
		add("if")
		add("then")
		add("else")
	}
	add("not")
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		addAll(schemaListKeyword(s, key))
	}
	for _, sub := range subschemas {
		if err := cs.analyze(root, sub, seen); err != nil {
			return err
		}
	}
	return nil
}

func (cs *compiledSchema) addPattern(p string) error {
	if cs.pattern(p) != nil {
		return nil
	}
	translated, err := jsPatternToGo(p, false)
	var re *regexp.Regexp
	if err == nil {
		re, err = regexp.Compile(translated)
	}
	if err != nil {
		return fmt.Errorf("pattern %q cannot be run by Go's regexp: %w", p, err)
	}
	cs.regexps.Store(p, re)
	return nil
}

// refTarget resolves a $ref at compile time. TypeBox throws a TypeError when
// the target is a string or a number, and a URIError on a bad escape.
func refTarget(root any, ref string) (any, error) {
	if strings.HasPrefix(ref, "#") {
		if _, err := decodeURIComponent(ref[1:]); err != nil {
			return nil, err
		}
	}
	target, found := lookupRef(root, ref)
	switch target.(type) {
	case string, float64:
		if found {
			return nil, jsThrow("Cannot use 'in' operator to search for 'type' in " + describeNonSchema(target))
		}
	}
	return target, nil
}

// memberCompiles reports whether pi could compile a union member as a
// validator of its own; pi skips members it cannot compile.
func (cs *compiledSchema) memberCompiles(member *jsObject) bool {
	if err, done := cs.members.Load(member); done {
		return err == nil
	}
	err := cs.analyze(member, member, map[*jsObject]bool{})
	cs.members.Store(member, err)
	return err == nil
}

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
	for _, key := range jsKeys(value) {
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

func isJSSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', '\u2028', '\u2029', '\ufeff':
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

func trimJSSpace(s string) string { return strings.TrimFunc(s, isJSSpace) }

var decimalLiteral = regexp.MustCompile(`^[+-]?(?:Infinity|[0-9]+\.?[0-9]*(?:[eE][+-]?[0-9]+)?|\.[0-9]+(?:[eE][+-]?[0-9]+)?)$`)

// jsStringToNumber is JavaScript's Number(string); ok false means NaN.
func jsStringToNumber(s string) (float64, bool) {
	s = trimJSSpace(s)
	if s == "" {
		return 0, true
	}
	if len(s) > 2 && s[0] == '0' {
		base := map[byte]int{'x': 16, 'X': 16, 'o': 8, 'O': 8, 'b': 2, 'B': 2}[s[1]]
		if base != 0 {
			n, ok := new(big.Int).SetString(s[2:], base)
			if !ok || strings.ContainsAny(s[2:], "+-_") {
				return 0, false
			}
			f, _ := new(big.Float).SetInt(n).Float64()
			return f, true
		}
	}
	if !decimalLiteral.MatchString(s) {
		return 0, false
	}
	switch strings.TrimLeft(s, "+") {
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// jsNumberString is JavaScript's Number.prototype.toString().
func jsNumberString(f float64) string { return jsjson.NumberString(f) }

// jsonStringify is JSON.stringify(v, null, 2) for decoded JSON, keys in
// JavaScript's order (see jsKeys).
func jsonStringify(v any) string {
	return jsjson.Stringify(v, jsjson.Options{Indent: "  ", Keys: jsKeys})
}

// normalizeArgs turns whatever the caller built into the values
// encoding/json decodes to, so that ints and float64s behave alike.
func normalizeArgs(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		n, err := normalizeJSON(v)
		if err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, nil
}

func normalizeJSON(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, float64, string:
		return x, nil
	case json.Number:
		return jsStringToNumberOrZero(string(x)), nil
	case map[string]any:
		return normalizeArgs(x)
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			n, err := normalizeJSON(item)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), nil
	case reflect.Float32, reflect.Float64:
		return rv.Float(), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	var decoded any
	if err := json.Unmarshal(data, &decoded); err != nil {
		return nil, fmt.Errorf("arguments are not JSON: %w", err)
	}
	return decoded, nil
}

func jsStringToNumberOrZero(s string) float64 {
	f, _ := jsStringToNumber(s)
	return f
}

// cloneJSON is structuredClone for decoded JSON.
func cloneJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = cloneJSON(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = cloneJSON(item)
		}
		return out
	}
	return v
}
