package typebox

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// TypeBox compiles every pattern it meets with new RegExp(pattern, 'u'):
// pattern, each key of patternProperties, the one expression of all
// property names and patterns that additionalProperties tests keys with,
// and the value of the regex format. regexp2's ECMAScript mode with its
// Unicode option matches as V8 does under the u flag: lookaround,
// backreferences, named groups, \p{..}, JavaScript's \s and ".", code points
// rather than UTF-16 units.

// matchTimeout bounds one match. In pi a pattern that backtracks without
// end, such as ^(a+)+$ on "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!", hangs the
// process; here it would hold a worker's activity slot for as long. Patterns
// in tool schemas take microseconds on real arguments.
const matchTimeout = time.Second

// compilePattern is new RegExp(p, 'u'). The error texts are regexp2's or
// checkUnicodeSyntax's, not V8's. The one pattern V8 takes and regexp2 does
// not is a repetition count above 2^31-1, such as x{2147483648}.
func compilePattern(p string) (*regexp2.Regexp, error) {
	if err := checkUnicodeSyntax(p); err != nil {
		return nil, err
	}
	re, err := regexp2.Compile(p, regexp2.ECMAScript|regexp2.Unicode)
	if err != nil {
		return nil, err
	}
	re.MatchTimeout = matchTimeout
	return re, nil
}

// matchPattern is RegExp.prototype.test. The error is a match that ran out
// of time or of backtracking stack, which V8 would have gone on with.
func matchPattern(re *regexp2.Regexp, s string) (bool, error) {
	ok, err := re.MatchString(s)
	switch {
	case err == nil:
		return ok, nil
	case errors.Is(err, regexp2.ErrBacktrackingStackLimit):
		return false, fmt.Errorf("pattern %q needs more backtracking than a match may use", re.String())
	default:
		return false, fmt.Errorf("pattern %q did not finish matching within %v", re.String(), matchTimeout)
	}
}

// checkUnicodeSyntax rejects what the u flag forbids but regexp2, which
// comes from .NET, accepts in ECMAScript mode: inline options, comments and
// atomic groups ((?i), (?#..), (?>..)), escapes of characters that are not
// syntax characters (\A, \z, \e, \_), braces and brackets that stand alone,
// and, as in Node 20's V8, which pi supports, a group name used twice.
// Everything else, such as a bad \u or \p or a quantifier with nothing to
// repeat, regexp2 rejects itself.
func checkUnicodeSyntax(p string) error {
	names := map[string]bool{}
	for i := 0; i < len(p); {
		var n int
		var err error
		switch p[i] {
		case '\\':
			n, err = escapeLength(p[i:], false)
		case '[':
			n, err = classLength(p[i:])
		case '(':
			n, err = groupOpenLength(p[i:], names)
		case '{':
			n = len(braceQuantifier.FindString(p[i:]))
			if n == 0 {
				err = errors.New("lone quantifier bracket")
			}
		case '}', ']':
			err = errors.New("lone quantifier bracket")
		default:
			n = 1
		}
		if err != nil {
			return err
		}
		i += n
	}
	return nil
}

var braceQuantifier = regexp.MustCompile(`^\{[0-9]+(?:,[0-9]*)?\}`)

// escapeLength returns how many bytes the escape at the start of s takes,
// or an error for an escape the u flag does not know. Escapes whose body
// regexp2 checks are only skipped, so that the braces of \u{..} and \p{..}
// do not count as quantifiers.
func escapeLength(s string, inClass bool) (int, error) {
	if len(s) < 2 {
		return 0, errors.New(`\ at end of pattern`)
	}
	c := s[1]
	switch {
	case strings.IndexByte(`^$\.*+?()[]{}|/`, c) >= 0, strings.IndexByte("dDwWsSbtnrfv0cx", c) >= 0:
		return 2, nil
	case c == '-' && inClass:
		return 2, nil
	case (c == 'B' || '1' <= c && c <= '9') && !inClass:
		return 2, nil
	case c == 'u' || c == 'p' || c == 'P':
		return bracedLength(s, '{', '}'), nil
	case c == 'k' && !inClass:
		return bracedLength(s, '<', '>'), nil
	}
	r, _ := utf8.DecodeRuneInString(s[1:])
	return 0, fmt.Errorf(`invalid escape \%c`, r)
}

// bracedLength is the length of an escape such as \u{1F600} or \k<name>:
// two bytes, and its body when one opens right after them.
func bracedLength(s string, open, close byte) int {
	if len(s) > 2 && s[2] == open {
		if end := strings.IndexByte(s, close); end > 0 {
			return end + 1
		}
	}
	return 2
}

// classLength returns the length of the character class at the start of s,
// up to and including its closing bracket. A [ inside a class is a literal,
// so [[:alpha:]] ends at its first ] and leaves a lone one.
func classLength(s string) (int, error) {
	i := 1
	if strings.HasPrefix(s[i:], "^") {
		i++
	}
	for i < len(s) {
		switch s[i] {
		case ']':
			return i + 1, nil
		case '\\':
			n, err := escapeLength(s[i:], true)
			if err != nil {
				return 0, err
			}
			i += n
		default:
			i++
		}
	}
	return 0, errors.New("unterminated character class")
}

// groupOpenLength returns the length of the opening of the group at the
// start of s: "(", "(?:", a lookaround, or a named group with its name,
// which must not have been used before.
func groupOpenLength(s string, names map[string]bool) (int, error) {
	for _, open := range []string{"(?:", "(?=", "(?!", "(?<=", "(?<!"} {
		if strings.HasPrefix(s, open) {
			return len(open), nil
		}
	}
	if strings.HasPrefix(s, "(?<") {
		end := strings.IndexByte(s, '>')
		if end < 0 {
			return 0, errors.New("invalid capture group name")
		}
		name := s[3:end]
		if names[name] {
			return 0, errors.New("duplicate capture group name")
		}
		names[name] = true
		return end + 1, nil
	}
	if strings.HasPrefix(s, "(?") {
		return 0, errors.New("invalid group")
	}
	return 1, nil
}
