package activities

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/durable-agents/agentloop/agent"
)

// MaxResultBytes bounds the JSON of one tool result. Temporal refuses
// payloads over 2 MB and a result is recorded more than once (execute and
// finalize results, the next model turn's input), so this stays well below.
const MaxResultBytes = 512 << 10

// capResult keeps a result under MaxResultBytes: text is cut with a notice,
// images and details that do not fit are dropped with a notice. Well-behaved
// tools truncate far earlier; this is the backstop that keeps a misbehaving
// one from failing the run with a payload error retried forever.
func capResult(r agent.ToolResult) agent.ToolResult {
	size := jsonSize(r)
	if size <= MaxResultBytes {
		return r
	}
	out := agent.ToolResult{Terminate: r.Terminate, Details: r.Details}
	if len(r.Details) > MaxResultBytes/4 {
		out.Details = json.RawMessage("{}")
	}
	budget := MaxResultBytes - len(out.Details) - 256
	for _, c := range r.Content {
		n := jsonSize(c)
		switch {
		case n <= budget:
			out.Content = append(out.Content, c)
			budget -= n
		case c.Type == agent.ContentText && budget > 1024:
			keep := cutUTF8(c.Text, budget-512)
			notice := fmt.Sprintf("\n\n[Output truncated: %d of %d bytes shown; the result was over the %d byte limit.]",
				len(keep), len(c.Text), MaxResultBytes)
			out.Content = append(out.Content, agent.Text(keep+notice))
			budget = 0
		default:
			out.Content = append(out.Content, agent.Text(fmt.Sprintf(
				"[%s block of %d bytes omitted: the result was over the %d byte limit.]", c.Type, n, MaxResultBytes)))
			budget -= 128
		}
	}
	return out
}

// maxErrorBytes bounds an error message that travels as an activity
// failure: it is not a result, but it is recorded all the same.
const maxErrorBytes = 64 << 10

// capText cuts an error message to maxErrorBytes with a notice.
func capText(s string) string {
	if len(s) <= maxErrorBytes {
		return s
	}
	keep := cutUTF8(s, maxErrorBytes-128)
	return fmt.Sprintf("%s\n\n[Message truncated: %d of %d bytes shown.]", keep, len(keep), len(s))
}

func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// cutUTF8 returns a prefix of s, cut at a rune boundary, whose JSON string
// encoding fits in budget bytes.
func cutUTF8(s string, budget int) string {
	n := min(len(s), budget)
	for n > 0 {
		for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if jsonSize(s[:n]) <= budget {
			return s[:n]
		}
		n = n * 3 / 4
	}
	return ""
}
