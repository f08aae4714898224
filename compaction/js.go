package compaction

import (
	"unicode/utf8"

	"github.com/durable-agents/agentloop/internal/jsjson"
)

// pi measures and cuts text as JavaScript does, in UTF-16 code units, and
// writes tool-call arguments with JSON.stringify. These helpers do the same on
// Go strings so that token estimates, truncation and prompts come out equal.

// jsLen is JavaScript's string length: UTF-16 code units.
func jsLen(s string) int { return jsjson.LengthUTF16(s) }

// jsSlice is s.slice(0, n) for n < jsLen(s). Where the cut falls inside a
// surrogate pair JavaScript keeps a lone high surrogate, which no UTF-8
// string can hold; it becomes U+FFFD, as it does when pi's request is
// decoded from JSON (JSON.stringify writes it as "\ud83d").
func jsSlice(s string, n int) string {
	units := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if units+w > n {
			if units < n {
				return s[:i] + string(utf8.RuneError)
			}
			return s[:i]
		}
		units += w
	}
	return s
}

// jsStringify is JSON.stringify with keys in JavaScript's order, for values
// decoded from JSON and for other Go values a caller puts in arguments.
func jsStringify(v any) string {
	return jsjson.Stringify(v, jsjson.Options{Keys: jsjson.Keys})
}
