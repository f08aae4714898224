package llm

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// BenchmarkToolCallArgumentFragments assembles one tool call whose
// arguments (a file's content, as a write tool gets it) arrive in 8-byte
// fragments, as models stream them a few tokens at a time:
//
//	go test ./llm -run '^$' -bench ToolCallArgumentFragments -benchtime 1x
func BenchmarkToolCallArgumentFragments(b *testing.B) {
	for _, size := range []int{16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		raw, _ := json.Marshal(map[string]string{"path": "f.txt", "content": strings.Repeat("x", size)})
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			for b.Loop() {
				a := newAssembler(APIOpenAICompletions, "openai", "gpt-5", Price{}, nil)
				i := a.startBlock(agent.ToolCall("call", "write", map[string]any{}))
				for at := 0; at < len(raw); at += 8 {
					a.toolDelta(i, string(raw[at:min(at+8, len(raw))]))
				}
				a.endBlock(i)
				if got := a.msg.Content[i].Arguments["content"].(string); len(got) != size {
					b.Fatalf("content of %d bytes, want %d", len(got), size)
				}
			}
		})
	}
}

// TestToolCallArgumentsParseLinearly streams 1 MB of arguments in 8-byte
// fragments: all the parsing while streaming stays within a few times the
// text's length (it was the square: 64 KB took 8 s), small arguments are
// parsed on every fragment as pi's are, and the call ends with every
// argument.
func TestToolCallArgumentsParseLinearly(t *testing.T) {
	raw, _ := json.Marshal(map[string]string{"path": "f.txt", "content": strings.Repeat("x", 1<<20)})
	var partials []map[string]any
	a := newAssembler(APIOpenAICompletions, "openai", "gpt-5", Price{}, func(e agent.StreamEvent) {
		if e.Type == agent.StreamToolCallDelta {
			partials = append(partials, e.Partial.Content[0].Arguments)
		}
	})
	i := a.startBlock(agent.ToolCall("call", "write", map[string]any{}))
	a.setArgs(i, "")
	for at := 0; at < len(raw); at += 8 {
		a.toolDelta(i, string(raw[at:min(at+8, len(raw))]))
	}
	if a.parsedBytes > 10*len(raw) {
		t.Errorf("parsed %d bytes while streaming %d", a.parsedBytes, len(raw))
	}
	if got := partials[2]["content"]; got != "xxxxxxxxxxxx" {
		t.Errorf("third partial's content %v, want what the first 24 bytes hold", got)
	}
	a.endBlock(i)
	if got := a.msg.Content[i].Arguments["content"].(string); len(got) != 1<<20 {
		t.Errorf("content of %d bytes", len(got))
	}
}
