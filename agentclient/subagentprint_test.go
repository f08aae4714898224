package agentclient

import (
	"strings"
	"testing"

	"github.com/durable-agents/agentloop/agent"
)

// A sub-agent's progress is written whole, each line indented below its
// task call (a grandchild's a step further), and its approvals name it.
func TestPrinterShowsSubAgents(t *testing.T) {
	var b strings.Builder
	p := &Printer{W: &b}
	child := &agent.SubAgentRef{Agent: "helper", WorkflowID: "run/task-1-1-t1"}
	for _, e := range []agent.Event{
		{Seq: 7, Type: agent.EventToolExecutionStart, ToolCallID: "t1", ToolName: agent.SubAgentTool, Args: map[string]any{"agent": "helper", "prompt": "look"}},
		{Seq: 8, Type: agent.EventApprovalRequest, ToolCallID: "c1", ToolName: "risky", Args: map[string]any{}, Approval: &agent.ApprovalInfo{Reason: "risky calls need approval", SubAgent: child}},
		{Seq: 9, Type: agent.EventApprovalDecision, ToolCallID: "c1", ToolName: "risky", Approval: &agent.ApprovalInfo{Decision: agent.ApprovalAllow, SubAgent: child}},
		{Seq: 10, Type: agent.EventToolExecutionUpdate, ToolCallID: "t1", ToolName: agent.SubAgentTool, PartialResult: &agent.ToolResult{Content: []agent.Content{agent.Text("[helper] turn 1\n⚙ risky\n  [deep] turn 1")}}},
		{Seq: 11, Type: agent.EventToolExecutionEnd, ToolCallID: "t1", ToolName: agent.SubAgentTool, Result: &agent.ToolResult{Content: []agent.Content{agent.Text("done: look")}}},
	} {
		p.Print(e)
	}
	want := `   7   ⚙ task t1 {"agent":"helper","prompt":"look"}
   8   ? risky c1 {} waits for approval (sub-agent helper, run/task-1-1-t1): risky calls need approval
   9   ! risky c1 (sub-agent helper, run/task-1-1-t1) allow 
  10     ↳ [helper] turn 1
  10     ↳ ⚙ risky
  10     ↳   [deep] turn 1
  11   ✓ task t1 done: look
`
	if got := strings.TrimPrefix(b.String(), "\n"); got != want { // a printer begins with a line break
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
