package crashtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/compaction"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// The context crash test: a run whose context (ContextOutputs outputs of
// 48 KB) lives in the content store, and a model turn whose worker dies
// while it reads that context back.
const (
	ModelContext   = "crash-context" // big_output calls, then a slow answer that digests the context
	BigOutputTool  = "big_output"
	ContextOutputs = 20
	// ReadsLog is the file in the worker's dir where a worker started with
	// -store-read-delay notes each content read: "get pid=PID SHA".
	ReadsLog = "reads.log"
)

// BigOutput is big_output's 48,000 characters for a call id.
func BigOutput(callID string) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte(callID))
	for b.Len() < 48_000 {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:48_000]
}

// ContextDigest is what the context model answers in its second turn: the
// number, size and hash of the tool outputs it was sent, so a test can tell
// a whole context from a partial one.
func ContextDigest(outputs []string) string {
	h := sha256.New()
	n := 0
	for _, o := range outputs {
		h.Write([]byte(o))
		n += len(o)
	}
	return fmt.Sprintf("outputs=%d bytes=%d sha256=%x", len(outputs), n, h.Sum(nil))
}

// BigOutputCalls are the calls of the context model's first turn.
func BigOutputCalls() []string {
	var ids []string
	for i := range ContextOutputs {
		ids = append(ids, fmt.Sprintf("call-big-%02d", i))
	}
	return ids
}

// contextModel answers from a script it builds from the request: its
// second answer is the digest of the context, streamed slowly (like
// ModelStream) so a test can kill its worker mid-stream.
type contextModel struct{}

func (contextModel) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	var calls []agent.Content
	for _, id := range BigOutputCalls() {
		calls = append(calls, agent.ToolCall(id, BigOutputTool, map[string]any{}))
	}
	var outputs []string
	for _, m := range req.Messages {
		if m.Role == agent.RoleToolResult {
			outputs = append(outputs, agent.TextOf(m.Content))
		}
	}
	digest := ContextDigest(outputs) + " " + strings.Repeat("streaming chunk ", StreamChunks)
	p := llm.NewScriptedProvider()
	p.Add(ModelContext, llm.Script{ChunkDelay: StreamDelay, Responses: []llm.ScriptedResponse{
		{Content: calls},
		{Content: []agent.Content{agent.Text(digest)}},
	}})
	m, _ := p.Model(ModelContext)
	return m.Stream(ctx, req, emit)
}

// BigOutputTool returns BigOutput for its call id: read-only, so a lost
// attempt is simply run again.
type BigOutputs struct{}

// Definition implements tools.Tool.
func (BigOutputs) Definition() tools.Definition {
	return tools.Definition{Name: BigOutputTool, Description: "Prints 48 KB.", ReadOnly: true}
}

// Execute implements tools.Tool.
func (BigOutputs) Execute(_ context.Context, call tools.Call) (agent.ToolResult, error) {
	return agent.TextResult(BigOutput(call.ID)), nil
}

// SlowReads wraps a content store so that every read waits delay first and
// is noted in dir/ReadsLog: a test sees a cold worker reading a context back
// and kills it in the middle.
func SlowReads(b store.Blobs, delay time.Duration, dir string) store.Blobs {
	return slowReads{Blobs: b, delay: delay, log: filepath.Join(dir, ReadsLog)}
}

type slowReads struct {
	store.Blobs
	delay time.Duration
	log   string
}

func (s slowReads) Get(ctx context.Context, ref agent.BlobRef) ([]byte, error) {
	appendLine(s.log, fmt.Sprintf("get pid=%d %s", os.Getpid(), ref.SHA256))
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.Blobs.Get(ctx, ref)
}

// The compaction crash test: a run whose third turn compacts the context,
// and a worker killed while the summarizer writes.
const (
	ModelCompact = "crash-compact" // two big_output turns, a compaction, then done
	// SummariesLog is the file in the worker's dir where the compact model
	// notes each summary request it starts: "summarizing pid=PID".
	SummariesLog = "summaries.log"
	// CompactSummary is the summary the compact model writes, slowly.
	CompactSummary = "## Goal\nSummarized by the crash test."
)

// StateDir is the worker's dir, where the compact model writes
// SummariesLog; the worker sets it from -dir.
var StateDir string

// compactModel answers two big_output calls, one after the other, and then "done", and a
// summarization request (pi's summarizer system prompt) with
// CompactSummary streamed over about 4 s, noting the request in
// SummariesLog first.
type compactModel struct{}

func (compactModel) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	p := llm.NewScriptedProvider()
	if req.SystemPrompt == compaction.SummarizationSystemPrompt {
		appendLine(filepath.Join(StateDir, SummariesLog), fmt.Sprintf("summarizing pid=%d", os.Getpid()))
		text := CompactSummary + strings.Repeat(" ", 16*40)
		p.Add(ModelCompact, llm.Script{ChunkDelay: StreamDelay, Responses: []llm.ScriptedResponse{{Content: []agent.Content{agent.Text(text)}}}})
	} else {
		// The answer follows the latest tool result, not the number of
		// turns: a compacted context holds fewer of them.
		next := agent.ToolCall("call-big-1", BigOutputTool, map[string]any{})
		if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == agent.RoleToolResult {
			next = agent.Text("done")
			if req.Messages[n-1].ToolCallID == "call-big-1" {
				next = agent.ToolCall("call-big-2", BigOutputTool, map[string]any{})
			}
		}
		// The scripted model answers by its number of earlier answers.
		rs := make([]llm.ScriptedResponse, len(req.Messages)+1)
		for i := range rs {
			rs[i] = llm.ScriptedResponse{Content: []agent.Content{next}}
		}
		p.Add(ModelCompact, llm.Script{Responses: rs})
	}
	m, _ := p.Model(ModelCompact)
	return m.Stream(ctx, req, emit)
}
