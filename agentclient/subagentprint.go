package agentclient

import (
	"fmt"
	"strings"

	"github.com/durable-agents/agentloop/agent"
)

// A sub-agent's progress (its turns, as partial results of the parent's
// task call) is a few lines of news each, not a growing output: each is
// written whole, indented below the call, a grandchild's a step further
// (it comes indented).
func (p *Printer) subAgentProgress(e agent.Event) {
	text := strings.TrimRight(agent.TextOf(e.PartialResult.Content), "\n")
	for _, line := range strings.Split(text, "\n") {
		fmt.Fprintf(p.W, "%4d     %s↳ %s%s\n", e.Seq, p.dim(), p.cutLine(line), p.reset())
	}
}

// subAgentNote names the sub-agent of an approval event, "" for the run's
// own calls.
func subAgentNote(a *agent.ApprovalInfo) string {
	if a == nil || a.SubAgent == nil {
		return ""
	}
	return fmt.Sprintf(" (sub-agent %s, %s)", a.SubAgent.Agent, a.SubAgent.WorkflowID)
}
