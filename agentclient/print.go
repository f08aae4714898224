package agentclient

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// Printer writes events for a person at a terminal, or as JSON lines.
// Live deltas (message_update) are written as they come, on one line per
// content block.
type Printer struct {
	W    io.Writer
	JSON bool
	// Width cuts long texts; zero means 200 characters.
	Width int

	streamed bool           // this message's text was shown live
	shown    map[int]string // text shown live, by content block
	block    int            // content block being shown live, -1 for none
	attempt  int32          // attempt of the live deltas shown
}

// Print writes one event.
func (p *Printer) Print(e agent.Event) {
	if p.JSON {
		b, _ := json.Marshal(e)
		fmt.Fprintln(p.W, string(b))
		return
	}
	switch e.Type {
	case agent.EventMessageUpdate:
		p.delta(e)
		return
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
		args, _ := json.Marshal(e.Args)
		fmt.Fprintf(p.W, "%4d   ⚙ %s %s %s\n", e.Seq, e.ToolName, e.ToolCallID, p.cut(string(args)))
	case agent.EventToolExecutionUpdate:
		if e.PartialResult != nil {
			fmt.Fprintf(p.W, "%4d   … %s %s\n", e.Seq, e.ToolCallID, p.cut(agent.TextOf(e.PartialResult.Content)))
		}
	case agent.EventToolExecutionEnd:
		mark, text := "✓", ""
		if e.IsError {
			mark = "✗"
		}
		if e.Result != nil {
			text = agent.TextOf(e.Result.Content)
		}
		fmt.Fprintf(p.W, "%4d   %s %s %s %s\n", e.Seq, mark, e.ToolName, e.ToolCallID, p.cut(text))
	case agent.EventApprovalRequest:
		args, _ := json.Marshal(e.Args)
		fmt.Fprintf(p.W, "%4d   ? %s %s %s waits for approval: %s\n", e.Seq, e.ToolName, e.ToolCallID, p.cut(string(args)), e.Approval.Reason)
	case agent.EventApprovalDecision:
		fmt.Fprintf(p.W, "%4d   ! %s %s %s %s\n", e.Seq, e.ToolName, e.ToolCallID, e.Approval.Decision, e.Approval.Reason)
	case agent.EventAgentEnd:
		fmt.Fprintf(p.W, "%4d ■ agent end (%d new messages)\n", e.Seq, len(e.Messages))
	}
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
				fmt.Fprintf(p.W, "%4d   assistant: %s\n", seq, p.cut(c.Text))
			}
		}
		if m.StopReason == agent.StopReasonError || m.StopReason == agent.StopReasonAborted {
			fmt.Fprintf(p.W, "%4d   assistant %s: %s\n", seq, m.StopReason, m.ErrorMessage)
		}
	}
}

func (p *Printer) cut(s string) string {
	w := p.Width
	if w <= 0 {
		w = 200
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > w {
		return string(r[:w-1]) + "…"
	}
	return s
}
