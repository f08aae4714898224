package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// collapsedLines is how many lines of a tool's output a replayed
// transcript shows.
const collapsedLines = 2

// replayTranscript writes what a session said so far, as a chat that comes
// back to it shows it: prompts and answers whole, tool calls on a line,
// their outputs collapsed to a line or two.
func (e *env) replayTranscript(ctx context.Context, id string) error {
	ms, err := agentclient.FullTranscript(ctx, e.c, e.store, id)
	if err != nil {
		return err
	}
	printTranscript(e.out, ms)
	return nil
}

func printTranscript(w io.Writer, ms []agent.Message) {
	for _, m := range ms {
		switch m.Role {
		case agent.RoleUser:
			fmt.Fprintf(w, "› %s\n", agent.TextOf(m.Content))
		case agent.RoleAssistant:
			for _, c := range m.Content {
				switch c.Type {
				case agent.ContentText:
					fmt.Fprintf(w, "  assistant ▸ %s\n", c.Text)
				case agent.ContentThinking:
					fmt.Fprintf(w, "  thinking ▸ %s\n", collapse(c.Thinking, 1))
				case agent.ContentToolCall:
					fmt.Fprintf(w, "  ⚙ %s %s\n", c.Name, collapse(agentclient.CallArgs(c.Name, c.Arguments), 1))
				}
			}
			if m.StopReason.Unanswered() {
				fmt.Fprintf(w, "  assistant %s: %s\n", m.StopReason, m.ErrorMessage)
			}
		case agent.RoleToolResult:
			mark := "✓"
			if m.IsError {
				mark = "✗"
			}
			fmt.Fprintf(w, "    %s %s %s\n", mark, m.ToolName, collapse(agent.TextOf(m.Content), collapsedLines))
		}
	}
}

// collapse keeps the first n lines of s, each cut to 120 characters, and
// says how many lines it left out.
func collapse(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	out := lines[:min(n, len(lines))]
	for i, l := range out {
		if r := []rune(l); len(r) > 120 {
			out[i] = string(r[:119]) + "…"
		}
	}
	text := strings.Join(out, "\n      ")
	switch more := len(lines) - len(out); {
	case more == 1:
		text += " … (1 more line)"
	case more > 1:
		text += fmt.Sprintf(" … (%d more lines)", more)
	}
	return text
}

// sessionWorkspace is the workspace a session's run was started with, from
// its start event, for diffs of calls waiting for approval; "" when it
// cannot be read.
func (e *env) sessionWorkspace(ctx context.Context, id string) string {
	it := e.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	if !it.HasNext() {
		return ""
	}
	ev, err := it.Next()
	if err != nil {
		return ""
	}
	dc := e.dc
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	var in agentapi.SessionInput
	attrs := ev.GetWorkflowExecutionStartedEventAttributes()
	if attrs == nil || dc.FromPayloads(attrs.GetInput(), &in) != nil {
		return ""
	}
	return in.Workspace
}
