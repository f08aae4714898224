package typebox

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// jsSpaces is what \s matches in a JavaScript regular expression; Go's \s is
// ASCII only.
const jsSpaces = `\t\n\v\f\r \x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{feff}`

// jsPatternToGo translates a JavaScript pattern, compiled by TypeBox with the
// u flag, to RE2 syntax. Syntax the u flag rejects is an error. So is what
// RE2 cannot run (lookaround, backreferences), unless syntaxOnly: then they
// become empty groups, which is enough to tell whether JavaScript would
// accept the pattern (the regex format).
func jsPatternToGo(p string, syntaxOnly bool) (string, error) {
	t := &patternTranslator{p: p, syntaxOnly: syntaxOnly}
	t.groups, t.names = countGroups(p)
	for t.i < len(p) {
		if err := t.next(); err != nil {
			return "", err
		}
	}
	return t.out.String(), nil
}

// patternTranslator is jsPatternToGo's state while it walks the pattern.
type patternTranslator struct {
	p          string
	syntaxOnly bool
	groups     int
	names      map[string]bool
	out        strings.Builder
	i          int // the next byte of p to translate
	// lookaround holds, per open group, whether it is an assertion; an
	// assertion, like ^ and $, cannot take a quantifier under the u flag.
	lookaround []bool
	// assertion is whether what was just translated is an assertion.
	assertion bool
}

// next translates the token at t.i and moves past it.
func (t *patternTranslator) next() error {
	r, size := utf8.DecodeRuneInString(t.p[t.i:])
	if strings.ContainsRune("*+?{", r) && t.assertion {
		return errors.New("nothing to repeat")
	}
	t.assertion = false
	switch r {
	case '\\':
		return t.escape()
	case '[':
		return t.class()
	case ']', '}':
		return errors.New("lone quantifier bracket")
	case '{':
		return t.brace()
	case '(':
		return t.openGroup()
	case ')':
		if len(t.lookaround) > 0 {
			t.assertion = t.lookaround[len(t.lookaround)-1]
			t.lookaround = t.lookaround[:len(t.lookaround)-1]
		}
		t.out.WriteByte(')')
	case '^', '$':
		t.assertion = true
		t.out.WriteRune(r)
	case '.':
		t.out.WriteString(`[^\n\r\x{2028}\x{2029}]`)
	default:
		t.out.WriteString(t.p[t.i : t.i+size])
	}
	t.i += size
	return nil
}

func (t *patternTranslator) escape() error {
	n, out, err := translateEscape(t.p[t.i:], false, t.groups, t.names, t.syntaxOnly)
	if err != nil {
		return err
	}
	t.assertion = out == `\b` || out == `\B`
	t.out.WriteString(out)
	t.i += n
	return nil
}

func (t *patternTranslator) class() error {
	switch rest := t.p[t.i:]; {
	case strings.HasPrefix(rest, "[]"):
		t.out.WriteString(`[^\x{0}-\x{10FFFF}]`)
		t.i += 2
		return nil
	case strings.HasPrefix(rest, "[^]"):
		t.out.WriteString(`[\x{0}-\x{10FFFF}]`)
		t.i += 3
		return nil
	}
	start := t.i + 1
	if strings.HasPrefix(t.p[start:], "^") {
		start++
	}
	n, out, err := translateClassAtoms(t.p[start:], t.groups, t.names, t.syntaxOnly)
	if err != nil {
		return err
	}
	t.out.WriteString(t.p[t.i:start] + out)
	t.i = start + n
	return nil
}

func (t *patternTranslator) brace() error {
	m := braceQuantifier.FindString(t.p[t.i:])
	if m == "" {
		return errors.New("lone quantifier bracket")
	}
	t.out.WriteString(m)
	t.i += len(m)
	return nil
}

func (t *patternTranslator) openGroup() error {
	rest := t.p[t.i:]
	open, skip, isAssertion := "(", 1, false
	switch {
	case strings.HasPrefix(rest, "(?:"):
		open, skip = "(?:", 3
	case strings.HasPrefix(rest, "(?=") || strings.HasPrefix(rest, "(?!"):
		if !t.syntaxOnly {
			return errors.New("lookahead is not supported")
		}
		open, skip, isAssertion = "(?:", 3, true
	case strings.HasPrefix(rest, "(?<=") || strings.HasPrefix(rest, "(?<!"):
		if !t.syntaxOnly {
			return errors.New("lookbehind is not supported")
		}
		open, skip, isAssertion = "(?:", 4, true
	case strings.HasPrefix(rest, "(?<"):
		open, skip = "(?P<", 3
	case strings.HasPrefix(rest, "(?"):
		return errors.New("invalid group")
	}
	t.lookaround = append(t.lookaround, isAssertion)
	t.out.WriteString(open)
	t.i += skip
	return nil
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
