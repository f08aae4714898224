package typebox

import (
	"encoding/json"
	"testing"
)

// BenchmarkValidateGoldens validates every golden case once per iteration:
// the spread of schemas, keywords and failures the goldens cover.
func BenchmarkValidateGoldens(b *testing.B) {
	cases, _ := loadValidationCases(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cases {
			_, _ = Validate("demo", c.Schema, c.Args)
		}
	}
}

// BenchmarkValidatePatterns is a call whose checks are mostly regular
// expressions: pattern, patternProperties and the additionalProperties
// test that goes with them, on arguments that pass.
func BenchmarkValidatePatterns(b *testing.B) {
	schema := json.RawMessage(`{"type":"object",
		"properties":{"id":{"type":"string","pattern":"^[a-z][a-z0-9_-]{2,31}$"},
			"email":{"type":"string","pattern":"^[^@\\s]+@[^@\\s]+\\.[a-z]{2,}$"},
			"tags":{"type":"array","items":{"type":"string","pattern":"^\\p{L}[\\p{L}\\p{N}-]*$"}}},
		"patternProperties":{"^x-[a-z]+$":{"type":"string"}},
		"additionalProperties":false}`)
	args := map[string]any{
		"id": "agent_loop-42", "email": "someone@example.org",
		"tags":    []any{"alpha", "bêta", "gamma-3", "δέλτα"},
		"x-trace": "on", "x-owner": "tools",
	}
	if _, err := Validate("demo", schema, args); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _ = Validate("demo", schema, args)
	}
}
