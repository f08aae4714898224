package llm

import (
	"encoding/json"
	"strings"
)

// partialParser reads a JSON document that may stop anywhere, as tool-call
// arguments do while they stream: it keeps every member and element that
// has begun (a string cut short keeps its prefix) and drops a key whose
// value has not started. A syntax error, as opposed to an early end, makes
// the whole parse fail (bad).
type partialParser struct {
	s   string
	i   int
	bad bool
}

func (p *partialParser) eof() bool { return p.i >= len(p.s) }

func (p *partialParser) space() {
	for !p.eof() && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// value reads one value; ok is false when the input ends before the value
// has any usable part, or on a syntax error.
func (p *partialParser) value() (any, bool) {
	p.space()
	if p.eof() {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, _, ok := p.str()
		return s, ok
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.literal()
	}
}

func (p *partialParser) object() (any, bool) {
	p.i++
	m := map[string]any{}
	for {
		p.space()
		if p.eof() {
			return m, true
		}
		if p.s[p.i] == '}' {
			p.i++
			return m, true
		}
		if p.s[p.i] != '"' {
			p.bad = true
			return nil, false
		}
		key, closed, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if !closed || p.eof() {
			return m, true
		}
		if p.s[p.i] != ':' {
			p.bad = true
			return nil, false
		}
		p.i++
		v, ok := p.value()
		if p.bad {
			return nil, false
		}
		if !ok {
			return m, true
		}
		m[key] = v
		if !p.separator('}') {
			return m, !p.bad
		}
		if p.s[p.i-1] == '}' {
			return m, true
		}
	}
}

func (p *partialParser) array() (any, bool) {
	p.i++
	a := []any{}
	for {
		p.space()
		if p.eof() {
			return a, true
		}
		if p.s[p.i] == ']' {
			p.i++
			return a, true
		}
		v, ok := p.value()
		if p.bad {
			return nil, false
		}
		if !ok {
			return a, true
		}
		a = append(a, v)
		if !p.separator(']') {
			return a, !p.bad
		}
		if p.s[p.i-1] == ']' {
			return a, true
		}
	}
}

// separator consumes the comma or closing bracket after a member. It
// returns false at the end of input, or on anything else (setting bad).
func (p *partialParser) separator(closing byte) bool {
	p.space()
	if p.eof() {
		return false
	}
	if c := p.s[p.i]; c == ',' || c == closing {
		p.i++
		return true
	}
	p.bad = true
	return false
}

// str reads a string; closed reports whether its closing quote was seen.
// A string cut short keeps its prefix, less any escape cut in half.
func (p *partialParser) str() (s string, closed, ok bool) {
	start := p.i
	p.i++
	for !p.eof() {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			if err := json.Unmarshal([]byte(p.s[start:p.i]), &s); err != nil {
				p.bad = true
				return "", false, false
			}
			return s, true, true
		}
		p.i++
	}
	p.i = len(p.s)
	raw := trimCutEscape(p.s[start:])
	if err := json.Unmarshal([]byte(raw+`"`), &s); err != nil {
		p.bad = true
		return "", false, false
	}
	return s, false, true
}

// trimCutEscape drops an escape sequence that the end of input cut short.
func trimCutEscape(raw string) string {
	if i := strings.LastIndexByte(raw, '\\'); i >= 0 && i >= len(raw)-5 {
		backslashes := 0
		for j := i; j >= 0 && raw[j] == '\\'; j-- {
			backslashes++
		}
		escape := raw[i:]
		cut := escape == `\` || escape[1] == 'u' && len(escape) < 6
		if backslashes%2 == 1 && cut {
			return raw[:i]
		}
	}
	return raw
}

func (p *partialParser) number() (any, bool) {
	start := p.i
	for !p.eof() && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
		p.i++
	}
	tok := p.s[start:p.i]
	var f float64
	if json.Unmarshal([]byte(tok), &f) == nil {
		return f, true
	}
	if !p.eof() {
		p.bad = true
		return nil, false
	}
	// A number cut by the end of the document: partial-json (pi-ai's)
	// keeps what precedes its last "e" when that is a number ("1e" is 1,
	// "1.5e-" 1.5) and drops the member otherwise ("1.", "1E+", "-").
	if i := strings.LastIndexByte(tok, 'e'); i > 0 && json.Unmarshal([]byte(tok[:i]), &f) == nil {
		return f, true
	}
	return nil, false
}

// literal reads true, false or null, or at the end of input a prefix of
// one ("tr"), which is taken for the whole word.
func (p *partialParser) literal() (any, bool) {
	rest := p.s[p.i:]
	for _, lit := range []struct {
		word  string
		value any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(rest, lit.word) {
			p.i += len(lit.word)
			return lit.value, true
		}
		if strings.HasPrefix(lit.word, rest) {
			p.i = len(p.s)
			return lit.value, true
		}
	}
	p.bad = true
	return nil, false
}
