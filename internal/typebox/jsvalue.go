package typebox

import (
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// JavaScript value semantics the keywords depend on: equality for const and
// enum, TypeBox's hash input for uniqueItems, the order of an object's keys,
// and strings measured and ordered in UTF-16 code units.

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
		keys := slices.SortedFunc(maps.Keys(x), jsjson.CompareUTF16)
		keys = slices.DeleteFunc(keys, func(k string) bool { return k == "constructor" })
		for _, k := range keys {
			b = appendHashInput(b, k)
			b = appendHashInput(b, x[k])
		}
		return b
	}
	return b
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
