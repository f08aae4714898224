package cli

import (
	"fmt"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
)

// printer prints events to the starter's output: a rolling tail and
// colors on a terminal, plain appended lines elsewhere.
func (e *env) printer(asJSON bool) *agentclient.Printer {
	return &agentclient.Printer{W: e.out, JSON: asJSON,
		Terminal: !asJSON && isTerminal(e.out), Color: !asJSON && e.colors.reset != ""}
}

// promptMarker shows, on a terminal, that the chat waits for a line.
func (e *env) promptMarker() {
	if isTerminal(e.out) {
		fmt.Fprintf(e.out, "%s›%s ", e.colors.cyan+e.colors.bold, e.colors.reset)
	}
}

// runStatus prints the line after a chat's run: how it stopped, the
// tokens its model calls used and what they cost.
func (e *env) runStatus(end agent.Event) {
	var u agent.Usage
	turns := 0
	stop := agent.StopReason("")
	for _, m := range end.Messages {
		if m.Role == agent.RoleAssistant {
			if m.Usage != nil {
				u = u.Add(*m.Usage)
			}
			if m.StopReason != agent.StopReasonBudget {
				turns++ // a budget stop is made instead of a model call
			}
			stop = m.StopReason
		}
	}
	color := e.colors.dim
	if code := stopExit(stop); code != ExitOK {
		color = e.colors.red
	}
	fmt.Fprintf(e.out, "%s── %s · %d model calls · tokens in %d, out %d · $%.4f%s\n",
		color, stop, turns, u.Input, u.Output, u.Cost.Total, e.colors.reset)
}

// runEndError is the exit of a command that followed a session's run to
// its agent_end: how its last model call stopped (stopExit).
func runEndError(end agent.Event) error {
	stop := agent.StopReason("")
	for _, m := range end.Messages {
		if m.Role == agent.RoleAssistant {
			stop = m.StopReason
		}
	}
	if code := stopExit(stop); code != ExitOK {
		return exitError{code: code}
	}
	return nil
}
