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

// BenchmarkTextFragments assembles one text block of a long answer that
// arrives in 4-byte deltas.
func BenchmarkTextFragments(b *testing.B) {
	for _, size := range []int{256 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			for b.Loop() {
				a := newAssembler(APIOpenAICompletions, "openai", "gpt-5", Price{}, nil)
				i := a.startBlock(agent.Content{Type: agent.ContentText})
				for at := 0; at < size; at += 4 {
					a.textDelta(i, "abcd")
				}
				a.endBlock(i)
				if len(a.msg.Content[i].Text) != size {
					b.Fatalf("text of %d bytes, want %d", len(a.msg.Content[i].Text), size)
				}
			}
		})
	}
}

// TestTextDeltasKeepEarlierSnapshots checks that every partial message
// keeps the text it had when it was emitted, while later deltas grow the
// block in place, and that a text a provider replaced is grown from its
// new value.
func TestTextDeltasKeepEarlierSnapshots(t *testing.T) {
	var seen []string
	a := newAssembler(APIOpenAICompletions, "openai", "gpt-5", Price{}, func(e agent.StreamEvent) {
		if e.Type == agent.StreamTextDelta {
			seen = append(seen, e.Partial.Content[e.ContentIndex].Text)
		}
	})
	i := a.startBlock(agent.Content{Type: agent.ContentText})
	var want []string
	text := ""
	for n := range 5000 {
		d := fmt.Sprintf("<%d>", n)
		text += d
		want = append(want, text)
		a.textDelta(i, d)
	}
	for n := range want {
		if seen[n] != want[n] {
			t.Fatalf("partial %d is %q..., want %q...", n, seen[n][:min(len(seen[n]), 40)], want[n][:min(len(want[n]), 40)])
		}
	}
	a.msg.Content[i].Text = "replaced"
	a.textDelta(i, "!")
	if got := a.msg.Content[i].Text; got != "replaced!" {
		t.Errorf("text %q after a replacement, want %q", got, "replaced!")
	}
	if seen[len(seen)-2] != want[len(want)-1] {
		t.Error("the last partial before the replacement changed")
	}
}
