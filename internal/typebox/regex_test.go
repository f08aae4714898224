package typebox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A pattern that backtracks without end hangs pi. Here its match gives up
// after matchTimeout, wherever the pattern sits, and the call fails with an
// error naming it instead of holding a worker.
func TestValidateHostilePatternTimesOut(t *testing.T) {
	hostile := strings.Repeat("a", 40) + "!"
	for name, tc := range map[string]struct {
		schema string
		args   map[string]any
	}{
		"pattern": {
			`{"type":"object","properties":{"a":{"type":"string","pattern":"^(a+)+$"}}}`,
			map[string]any{"a": hostile},
		},
		"patternProperties": {
			`{"type":"object","patternProperties":{"^(a+)+$":{"type":"number"}}}`,
			map[string]any{hostile: 1},
		},
		"anyOf member during coercion": {
			`{"type":"object","properties":{"a":{"anyOf":[{"type":"string","pattern":"^(a+)+$"},{"type":"number"}]}}}`,
			map[string]any{"a": hostile},
		},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := Validate("t", json.RawMessage(tc.schema), tc.args)
			elapsed := time.Since(start)
			want := `tool "t": pattern "^(a+)+$" did not finish matching within 1s`
			if err == nil || err.Error() != want {
				t.Fatalf("got error %v, want %s", err, want)
			}
			// Generous: the machine running the test may be loaded.
			if elapsed > matchTimeout+5*time.Second {
				t.Fatalf("took %v, the match timeout is %v", elapsed, matchTimeout)
			}
		})
	}
}

// Patterns V8 rejects under the u flag but regexp2's ECMAScript mode
// accepts are refused, as TypeBox's compile refuses them.
func TestCompilePatternRejectsWhatTheUFlagRejects(t *testing.T) {
	for _, p := range []string{`(?i)a`, `(?m)^a`, `(?#c)`, `(?>a)`, `\A`, `\z`, `\e`, `\_`, `\-`, `a{`, `a}`, `a]`,
		`a{,5}`, `[[:alpha:]]`, `[\B]`, `[\k]`, `(?<a>x)(?<a>y)`, `(?<a>x)|(?<a>y)`, `\u{110000}`, `(unclosed`} {
		if _, err := compilePattern(p); err == nil {
			t.Errorf("%s compiled; V8 rejects it with the u flag", p)
		}
	}
	for _, p := range []string{`^(?=a)(?!b)`, `(?<=a)(?<!b)c`, `(a)\1`, `(?<n>a)\k<n>`, `\p{Script=Greek}\P{L}`,
		`\u{1F600}[\u{1F600}-\u{1F64F}]`, `[\d\-\]]`, `a{1,2}?`, `[^]`, `[]`, `\cJ\0\x41\/`} {
		if _, err := compilePattern(p); err != nil {
			t.Errorf("%s: %v; V8 compiles it with the u flag", p, err)
		}
	}
}
