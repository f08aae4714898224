package agentclient

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// Printer writes events for a person at a terminal, or as JSON lines.
// A running tool's partial output is a rolling tail (tail.go).
// Live deltas (message_update) are written as they come, on one line per
// content block. A tool call's partial results are written from the live
// stream once it has shown one for the call, else from the durable log,
// so that the same output is not written twice; a partial result without
// text is not written at all.
type Printer struct {
	W    io.Writer
	JSON bool
	// Width cuts long texts; zero means 200 characters.
	Width int
	// Terminal redraws a running tool's output in place; without it new
	// lines are appended. Color colors the output (a terminal without
	// NO_COLOR).
	Terminal, Color bool

	streamed bool           // this message's text was shown live
	shown    map[int]string // text shown live, by content block
	block    int            // content block being shown live, -1 for none
	attempt  int32          // attempt of the live deltas shown

	liveTools map[string]bool   // calls whose partial results come live
	partials  map[string]string // the partial result last shown, by call
	appended  map[string]string // the partial output's lines written, by call
	tailCall  string            // the call whose tail was drawn last
	tailDrawn int               // lines of that tail, while nothing followed
}

// Print writes one event.
func (p *Printer) Print(e agent.Event) {
	if p.JSON {
		b, _ := json.Marshal(e)
		fmt.Fprintln(p.W, string(b))
		return
	}
	w := p.W
	p.W = markWriter{w: w, p: p}
	defer func() { p.W = w }()
	switch e.Type {
	case agent.EventMessageUpdate:
		p.delta(e)
		return
	case agent.EventToolExecutionUpdate:
		if !p.newPartial(e) {
			return
		}
	case agent.EventMessageStart:
		p.streamed, p.block, p.attempt, p.shown = false, -1, 0, map[int]string{}
	case agent.EventMessageEnd:
		p.finishLive(e.Message)
	}
	if p.block >= 0 {
		fmt.Fprintln(p.W)
		p.block = -1
	}
	switch e.Type {
	case agent.EventAgentStart:
		fmt.Fprintf(p.W, "%4d ▶ agent start\n", e.Seq)
	case agent.EventTurnStart:
		fmt.Fprintf(p.W, "%4d ─ turn\n", e.Seq)
	case agent.EventMessageEnd:
		p.message(e.Seq, e.Message)
	case agent.EventToolExecutionStart:
		fmt.Fprintf(p.W, "%4d   ⚙ %s %s %s\n", e.Seq, e.ToolName, e.ToolCallID, p.cut(CallArgs(e.ToolName, e.Args)))
	case agent.EventToolExecutionUpdate:
		if e.ToolName == agent.SubAgentTool {
			p.subAgentProgress(e)
			break
		}
		p.W = w // the tail knows what it drew
		p.tail(e.ToolCallID, e.ToolName, p.partials[e.ToolCallID])
	case agent.EventToolExecutionEnd:
		delete(p.liveTools, e.ToolCallID)
		delete(p.partials, e.ToolCallID)
		delete(p.appended, e.ToolCallID)
		mark, text := p.color("\x1b[32m", "✓"), ""
		if e.IsError {
			mark = p.color("\x1b[31m", "✗")
		}
		if e.Result != nil {
			text = agent.TextOf(e.Result.Content)
		}
		fmt.Fprintf(p.W, "%4d   %s %s %s %s\n", e.Seq, mark, e.ToolName, e.ToolCallID, p.cut(text))
	case agent.EventApprovalRequest:
		args, _ := json.Marshal(e.Args)
		fmt.Fprintf(p.W, "%4d   ? %s %s %s waits for approval%s: %s\n", e.Seq, e.ToolName, e.ToolCallID, p.cut(string(args)), subAgentNote(e.Approval), e.Approval.Reason)
	case agent.EventApprovalDecision:
		fmt.Fprintf(p.W, "%4d   ! %s %s%s %s %s\n", e.Seq, e.ToolName, e.ToolCallID, subAgentNote(e.Approval), e.Approval.Decision, e.Approval.Reason)
	case agent.EventAgentEnd:
		fmt.Fprintf(p.W, "%4d ■ agent end (%d new messages)\n", e.Seq, len(e.Messages))
	case agent.EventCompactionStart:
		fmt.Fprintf(p.W, "%4d   ⇣ compacting the context (%s)\n", e.Seq, e.Compaction.Reason)
	case agent.EventCompactionEnd:
		p.compactionEnd(e)
	}
}

// compactionEnd writes how a compaction ended: "184K → 23K tokens".
func (p *Printer) compactionEnd(e agent.Event) {
	c := e.Compaction
	switch {
	case c.Result != nil:
		r := c.Result
		fmt.Fprintf(p.W, "%4d   ⇣ compacted: %s → %s tokens, %d messages summarized in %d characters\n",
			e.Seq, kTokens(r.TokensBefore), kTokens(r.TokensAfter), r.Summarized, r.SummaryChars)
	case c.Aborted:
		fmt.Fprintf(p.W, "%4d   ⇣ compaction aborted; the context is as it was\n", e.Seq)
	default:
		fmt.Fprintf(p.W, "%4d   ⇣ no compaction: %s\n", e.Seq, c.ErrorMessage)
	}
}

func kTokens(n int) string {
	if n >= 1000 {
		return fmt.Sprintf("%dK", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// newPartial says whether a tool_execution_update is to be written, and
// keeps the text to write: the end of the partial result's text (the
// newest output), when there is any and it is not what was last written
// for the call. Once a live one came for a call, the durable ones are
// skipped: they repeat what the live stream showed.
func (p *Printer) newPartial(e agent.Event) bool {
	if e.PartialResult == nil {
		return false
	}
	if p.liveTools == nil {
		p.liveTools, p.partials = map[string]bool{}, map[string]string{}
	}
	if e.Seq == 0 {
		p.liveTools[e.ToolCallID] = true
	} else if p.liveTools[e.ToolCallID] {
		return false
	}
	text := agent.TextOf(e.PartialResult.Content)
	if strings.TrimSpace(text) == "" || text == p.partials[e.ToolCallID] {
		return false
	}
	p.partials[e.ToolCallID] = text
	return true
}

// delta writes a live text or thinking delta.
func (p *Printer) delta(e agent.Event) {
	ev := e.AssistantMessageEvent
	if ev == nil {
		return
	}
	if e.Attempt != p.attempt && p.streamed {
		fmt.Fprintf(p.W, "\n       (model call retried: attempt %d; the text above is dropped)\n", e.Attempt)
		p.block, p.shown = -1, map[int]string{}
	}
	p.attempt = e.Attempt
	if ev.Type != agent.StreamTextDelta && ev.Type != agent.StreamThinkingDelta {
		return
	}
	if p.shown == nil {
		// The first delta of a printer that saw no message_start (a
		// watch that came back mid-stream): a block of its own.
		p.block = -1
	}
	if ev.ContentIndex != p.block {
		if p.block >= 0 {
			fmt.Fprintln(p.W)
		}
		label := "assistant"
		if ev.Type == agent.StreamThinkingDelta {
			label = "thinking"
		}
		fmt.Fprintf(p.W, "       %s ▸ ", label)
		p.block = ev.ContentIndex
	}
	fmt.Fprint(p.W, ev.Delta)
	if p.shown == nil {
		p.shown = map[int]string{}
	}
	p.shown[ev.ContentIndex] += ev.Delta
	p.streamed = true
}

// finishLive writes what the live stream had not shown of a final message:
// the last deltas can arrive with the result rather than before it.
func (p *Printer) finishLive(m *agent.Message) {
	if !p.streamed || m == nil {
		return
	}
	for i, c := range m.Content {
		text := c.Text
		if c.Type == agent.ContentThinking {
			text = c.Thinking
		}
		shown := p.shown[i]
		if text == shown || (c.Type != agent.ContentText && c.Type != agent.ContentThinking) {
			continue
		}
		if i != p.block {
			if p.block >= 0 {
				fmt.Fprintln(p.W)
			}
			fmt.Fprint(p.W, "       assistant ▸ ")
			shown = ""
		}
		fmt.Fprint(p.W, strings.TrimPrefix(text, shown))
		p.block = i
	}
}

func (p *Printer) message(seq int64, m *agent.Message) {
	if m == nil {
		return
	}
	switch m.Role {
	case agent.RoleUser:
		fmt.Fprintf(p.W, "%4d   user: %s\n", seq, p.cut(agent.TextOf(m.Content)))
	case agent.RoleAssistant:
		for _, c := range m.Content {
			if p.streamed && c.Type != agent.ContentToolCall {
				continue
			}
			switch c.Type {
			case agent.ContentThinking:
				fmt.Fprintf(p.W, "%4d   thinking: %s\n", seq, p.cut(c.Thinking))
			case agent.ContentText:
				// An answer is shown whole: it is what the person asked for.
				fmt.Fprintf(p.W, "%4d   assistant: %s\n", seq, c.Text)
			}
		}
		if m.StopReason.Unanswered() {
			fmt.Fprintf(p.W, "%4d   assistant %s: %s\n", seq, m.StopReason, m.ErrorMessage)
		}
	}
}

func (p *Printer) cut(s string) string {
	w := p.width()
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > w {
		return string(r[:w-1]) + "…"
	}
	return s
}

func (p *Printer) width() int {
	if p.Width <= 0 {
		return 200
	}
	return p.Width
}
