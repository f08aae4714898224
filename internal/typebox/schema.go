package typebox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dlclark/regexp2/v2"
)

// compiledSchema is a parsed schema, shared by every call that passes the
// same schema bytes.
type compiledSchema struct {
	root any
	// regexps holds every pattern reachable from an analysed root, already
	// compiled.
	regexps sync.Map // string -> *regexp2.Regexp
	// members remembers, per union member, whether pi could compile it on
	// its own (nil) or not (the error).
	members sync.Map // *jsObject -> error
}

// pattern is the compiled p, or nil when no analysed schema holds it.
func (cs *compiledSchema) pattern(p string) *regexp2.Regexp {
	re, _ := cs.regexps.Load(p)
	r, _ := re.(*regexp2.Regexp)
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
		if additional, ok := schemaKeyword(s, "additionalProperties"); ok && !ignoresAdditional(additional) {
			if err := cs.addPattern(additionalPattern(patterns)); err != nil {
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
	re, err := compilePattern(p)
	if err != nil {
		return fmt.Errorf("pattern %q is not a valid regular expression: %w", p, err)
	}
	cs.regexps.Store(p, re)
	return nil
}

// additionalPattern is the expression TypeBox tests an object's keys with
// for additionalProperties: every key of patternProperties as one
// alternation in a group. TypeBox adds the property names, escaped and
// anchored, which the caller checks by name instead. The group shifts the
// patterns' group numbers, so a backreference such as \1 may mean another
// group here than in patternProperties; TypeBox has the same quirk.
func additionalPattern(patterns *jsObject) string {
	return "(" + strings.Join(patterns.keys, "|") + ")"
}

// ignoresAdditional is TypeBox's IsAdditionalPropertiesIgnored: true and {}
// accept every value, so TypeBox compiles no expression for them.
func ignoresAdditional(schema any) bool {
	o, isObject := schema.(*jsObject)
	return schema == true || (isObject && len(o.keys) == 0)
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
