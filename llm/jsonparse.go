package llm

import (
	"encoding/json"
	"strings"
)

// parseStreamingJSON turns tool-call arguments, complete or still arriving,
// into an object, the way pi-ai's parseStreamingJson does: strict JSON first,
// then JSON with broken string escapes repaired, then the longest complete
// prefix of a truncated document. Whatever fails yields an empty object, so
// a model that writes invalid arguments never breaks the stream; the tool's
// argument validation reports the problem to the model instead.
func parseStreamingJSON(s string) map[string]any {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}
	}
	if m, ok := decodeObject(s); ok {
		return m
	}
	repaired := repairJSON(s)
	if m, ok := decodeObject(repaired); ok {
		return m
	}
	for _, candidate := range []string{s, repaired} {
		p := partialParser{s: candidate}
		p.space()
		if v, ok := p.value(); ok {
			if m, ok := v.(map[string]any); ok {
				return m
			}
			return map[string]any{}
		}
	}
	return map[string]any{}
}

// decodeObject decodes a complete JSON document; a document that is valid
// but not an object counts as no arguments.
func decodeObject(s string) (map[string]any, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}, true
	}
	return m, true
}

// repairJSON fixes what models commonly get wrong inside JSON strings: raw
// control characters (a literal newline in a file's content) and
// backslashes before characters that cannot be escaped (a Windows path).
func repairJSON(s string) string {
	var b strings.Builder
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !inString {
			b.WriteByte(c)
			inString = c == '"'
			continue
		}
		switch {
		case c == '"':
			b.WriteByte(c)
			inString = false
		case c == '\\':
			if i+1 < len(s) && validEscape(s, i+1) {
				b.WriteByte(c)
				b.WriteByte(s[i+1])
				i++
				continue
			}
			b.WriteString(`\\`)
		case c < 0x20:
			b.WriteString(escapeControl(c))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// validEscape reports whether s[i] may follow a backslash; \u needs four
// hex digits.
func validEscape(s string, i int) bool {
	switch s[i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if i+5 > len(s) {
			return false
		}
		for _, h := range s[i+1 : i+5] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", h) {
				return false
			}
		}
		return true
	}
	return false
}

func escapeControl(c byte) string {
	switch c {
	case '\b':
		return `\b`
	case '\f':
		return `\f`
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	}
	const hex = "0123456789abcdef"
	return `\u00` + string(hex[c>>4]) + string(hex[c&0xf])
}
