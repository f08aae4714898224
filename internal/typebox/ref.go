package typebox

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

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
			i, ok := jsjson.ArrayIndex(t)
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
