package llm

import (
	"encoding/json"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// parseStreamingJSON turns tool-call arguments, complete or still arriving,
// into an object: parseStreamingValue's result when it is one, else an
// empty object.
func parseStreamingJSON(s string) map[string]any {
	if m, ok := parseStreamingValue(s).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// toolArguments parses a tool call's argument text as pi-ai does and
// splits the value the way agent.Content holds it: an object as Arguments,
// any other value (an array, a string, a number, a complete null) as
// RawArguments, which fails the call's validation as in pi.
func toolArguments(s string) (map[string]any, json.RawMessage) {
	v := parseStreamingValue(s)
	if m, ok := v.(map[string]any); ok {
		return m, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return map[string]any{}, nil
	}
	return nil, raw
}

// setToolArguments sets c's arguments from their text (see toolArguments).
func setToolArguments(c *agent.Content, s string) {
	c.Arguments, c.RawArguments = toolArguments(s)
}

// parseStreamingValue is pi-ai's parseStreamingJson: strict JSON first,
// then JSON with broken string escapes repaired, then the longest complete
// prefix of a truncated document. Whatever fails yields an empty object, so
// a model that writes invalid arguments never breaks the stream; the tool's
// argument validation reports the problem to the model instead. A complete
// document that is not an object is kept as it is (null too), as pi keeps
// it; a truncated one that parses to null counts as an empty object.
func parseStreamingValue(s string) any {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}
	}
	if v, ok := decodeJSON(s); ok {
		return v
	}
	repaired := repairJSON(s)
	if v, ok := decodeJSON(repaired); ok {
		return v
	}
	for _, candidate := range []string{s, repaired} {
		p := partialParser{s: candidate}
		p.space()
		if v, ok := p.value(); ok {
			if v == nil {
				return map[string]any{}
			}
			return v
		}
	}
	return map[string]any{}
}

// decodeJSON decodes a complete JSON document.
func decodeJSON(s string) (any, bool) {
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return nil, false
	}
	return v, true
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
