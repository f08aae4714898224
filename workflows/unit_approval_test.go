package workflows_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// approvalEvents lists the approval events as type:call:decision.
func approvalEvents(evs []agent.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == agent.EventApprovalRequest || e.Type == agent.EventApprovalDecision {
			out = append(out, string(e.Type)+":"+e.ToolCallID+":"+e.Approval.Decision)
		}
	}
	return out
}

func (r *unitRun) approve(id, decision, reason, wantErr string) {
	r.update(agentapi.UpdateApprove, wantErr, agentapi.ApproveRequest{ToolCallID: id, Decision: decision, Reason: reason})
}

// pendingIDs is QueryState's pending approvals, by call id.
func (r *unitRun) pendingIDs() []string {
	var ids []string
	for _, p := range r.state().PendingApprovals {
		ids = append(ids, p.ToolCallID)
	}
	return ids
}

// Sequential calls wait one at a time; allow runs the call, deny blocks it
// with the reason as pi's beforeToolCall block does, always lets the tool
// through for the rest of the run.
func TestUnitApprovalsSequential(t *testing.T) {
	r := newUnitRun(t, []agent.Content{bashCall("c1", "ls"), bashCall("c2", "rm -rf build"), bashCall("c3", "git push"),
		bashCall("c4", "rm x")}, says("done")).tool("bash")
	in := r.input("go", "bash")
	in.ToolExecution = agent.ExecutionSequential
	in.Approval = &agent.ApprovalPolicy{Rules: []agent.ApprovalRule{{Tool: "bash", Arg: "command", Pattern: `^(rm|git push)\b`}}}
	r.at(time.Minute, func() {
		st := r.state()
		require.Equal(t, "waiting_approval", st.Status)
		require.Equal(t, []string{"c1"}, r.executedIDs(), "c1 matches no rule")
		require.Len(t, st.PendingApprovals, 1)
		require.Equal(t, "c2", st.PendingApprovals[0].ToolCallID)
		require.Equal(t, `bash command matches "^(rm|git push)\\b"`, st.PendingApprovals[0].Reason)
		require.Zero(t, st.PendingApprovals[0].Deadline, "no timeout, no deadline")
		r.approve("c9", "allow", "", `tool call "c9" is not waiting for approval; waiting: ["c2"]`)
		r.approve("c2", "maybe", "", "want allow, deny or always")
		r.approve("c2", "deny", "not on my machine", "")
	})
	r.at(2*time.Minute, func() {
		require.Equal(t, []string{"c3"}, r.pendingIDs())
		r.approve("c2", "allow", "", `tool call "c2" is not waiting for approval`)
		r.approve("c3", "always", "", "")
	})
	res, evs := r.run(in)
	require.Equal(t, []string{"c1", "c3", "c4"}, r.executedIDs(), "c4 ran without asking: bash was allowed for the rest of the run")
	require.Equal(t, "not on my machine", agent.TextOf(res.Messages[3].Content))
	require.True(t, res.Messages[3].IsError)
	require.Equal(t, []string{"approval_request:c2:", "approval_decision:c2:deny", "approval_request:c3:",
		"approval_decision:c3:always"}, approvalEvents(evs))
	require.Equal(t, []string{"bash"}, r.state().AllowedTools)
}

// In parallel mode every call that needs a person asks during preparation,
// decisions come in any order, and execution starts once all are decided;
// result messages stay in call order.
func TestUnitApprovalsParallel(t *testing.T) {
	r := newUnitRun(t, []agent.Content{agent.ToolCall("c1", "write", nil), agent.ToolCall("c2", "read", nil),
		agent.ToolCall("c3", "write", nil), agent.ToolCall("c4", "write", nil)}, says("done")).tool("write").tool("read")
	r.withInfo("read", func(i *activities.ToolInfo) { i.ReadOnly = true })
	in := r.input("go", "write", "read")
	in.Approval = &agent.ApprovalPolicy{Mutating: true}
	r.at(time.Minute, func() {
		require.Equal(t, []string{"c1", "c3", "c4"}, r.pendingIDs())
		require.Equal(t, "write can change things", r.state().PendingApprovals[0].Reason)
		require.Empty(t, r.executedIDs(), "nothing runs while approvals are pending, not even the read")
		r.approve("c4", "allow", "", "")
		r.approve("c3", "deny", "", "")
	})
	r.at(2*time.Minute, func() {
		require.Equal(t, []string{"c1"}, r.pendingIDs())
		require.Empty(t, r.executedIDs())
		r.approve("c1", "allow", "", "")
	})
	res, evs := r.run(in)
	require.ElementsMatch(t, []string{"c1", "c2", "c4"}, r.executedIDs())
	var ids []string
	for _, m := range res.Messages[2:6] {
		ids = append(ids, m.ToolCallID)
	}
	require.Equal(t, []string{"c1", "c2", "c3", "c4"}, ids)
	require.Equal(t, "Tool execution was denied by a person", agent.TextOf(res.Messages[4].Content))
	// Requests in call order during preparation, decisions in call order
	// once all are in; the denied call ends first, before any execution.
	require.Equal(t, []string{"approval_request:c1:", "approval_request:c3:", "approval_request:c4:",
		"approval_decision:c1:allow", "approval_decision:c3:deny", "approval_decision:c4:allow"}, approvalEvents(evs))
	var ends []string
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd {
			ends = append(ends, e.ToolCallID)
		}
	}
	require.Equal(t, "c3", ends[0])
}

// "always" decides the other waits of the same tool at once, and the tool
// needs no approval for the rest of the run.
func TestUnitApprovalAlwaysDecidesTheToolsOtherWaits(t *testing.T) {
	r := newUnitRun(t, []agent.Content{agent.ToolCall("c1", "write", nil), agent.ToolCall("c2", "write", nil),
		agent.ToolCall("c3", "edit", nil)}, []agent.Content{agent.ToolCall("c4", "write", nil)}, says("done")).
		tool("write").tool("edit")
	in := r.input("go", "write", "edit")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"*"}}
	r.at(time.Minute, func() {
		require.Equal(t, []string{"c1", "c2", "c3"}, r.pendingIDs())
		updateResultOf(r, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c2", Decision: agent.ApprovalAlways},
			func(s agentapi.ApprovalStatus) { require.Equal(t, 1, s.Pending, "c1 was decided with c2") })
		r.approve("c1", "deny", "", `tool call "c1" was already decided (always)`)
	})
	r.at(2*time.Minute, func() { r.approve("c3", "allow", "", "") })
	_, evs := r.run(in)
	ran := r.executedIDs()
	require.Len(t, ran, 4)
	require.ElementsMatch(t, []string{"c1", "c2", "c3"}, ran[:3], "the batch's calls run at once, in any order")
	require.Equal(t, "c4", ran[3])
	require.Equal(t, []string{"approval_request:c1:", "approval_request:c2:", "approval_request:c3:",
		"approval_decision:c1:always", "approval_decision:c2:always", "approval_decision:c3:allow"}, approvalEvents(evs))
}

// Silence past the deadline blocks the call with a clear reason; the
// request carries the deadline, on the workflow's clock.
func TestUnitApprovalTimeout(t *testing.T) {
	r := newUnitRun(t, []agent.Content{agent.ToolCall("c1", "write", nil)}, says("blocked")).tool("write")
	in := r.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}, Timeout: "30m"}
	start := r.env.Now()
	r.at(29*time.Minute, func() {
		require.Equal(t, []string{"c1"}, r.pendingIDs(), "still waiting a minute before the deadline")
	})
	res, evs := r.run(in)
	require.Empty(t, r.executedIDs())
	const blocked = "No approval within 30m0s: the tool call was blocked"
	require.Equal(t, blocked, agent.TextOf(res.Messages[2].Content))
	require.True(t, res.Messages[2].IsError)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	var request, decision *agent.Event
	for i, e := range evs {
		switch e.Type {
		case agent.EventApprovalRequest:
			request = &evs[i]
		case agent.EventApprovalDecision:
			decision = &evs[i]
		}
	}
	require.NotNil(t, request)
	require.Equal(t, start.Add(30*time.Minute).UnixMilli(), request.Approval.Deadline)
	require.NotNil(t, decision)
	require.Equal(t, agent.ApprovalDeny, decision.Approval.Decision)
	require.Equal(t, blocked, decision.Approval.Reason)
}

// An abort during the wait blocks the call and ends the run as aborted,
// without another model call.
func TestUnitApprovalAbort(t *testing.T) {
	r := newUnitRun(t, []agent.Content{agent.ToolCall("c1", "write", nil)}, says("never")).tool("write")
	in := r.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}}
	r.at(time.Hour, func() {
		st := r.state()
		require.Len(t, st.PendingApprovals, 1)
		require.Zero(t, st.PendingApprovals[0].Deadline, "no timeout, no deadline")
		updateResultOf(r, agentapi.UpdateAbort, map[string]any{}, func(s agentapi.AbortStatus) { require.False(t, s.AlreadyAborted) })
	})
	res, _ := r.run(in)
	require.Empty(t, r.executedIDs())
	require.Equal(t, "Run aborted while the tool call waited for approval", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.Len(t, r.modelTurns, 1, "the aborted turn makes no model call")
}

// Calls of one message may share an id: while both wait, an approval
// must say which by position; the approve Signal twin is checked as the
// Update is, and an invalid one is dropped.
func TestUnitApprovalSharedIDsAndSignal(t *testing.T) {
	r := newUnitRun(t, []agent.Content{agent.ToolCall("same", "write", map[string]any{"path": "a"}),
		agent.ToolCall("same", "write", map[string]any{"path": "b"})}, says("done")).tool("write")
	in := r.input("go", "write")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"write"}}
	r.at(time.Minute, func() {
		st := r.state()
		require.Len(t, st.PendingApprovals, 2)
		require.Equal(t, []int{1, 2}, []int{st.PendingApprovals[0].Position, st.PendingApprovals[1].Position})
		r.approve("same", "allow", "", `tool calls at positions [1 2] share the id "same": say which with its position`)
		r.update(agentapi.UpdateApprove, "", agentapi.ApproveRequest{ToolCallID: "same", Position: 2, Decision: agent.ApprovalDeny, Reason: "not b"})
		r.env.SignalWorkflow(agentapi.SignalApprove, agentapi.ApproveRequest{ToolCallID: "other", Decision: agent.ApprovalAllow})
	})
	r.at(2*time.Minute, func() {
		require.Equal(t, []string{"same"}, r.pendingIDs(), "the invalid Signal was dropped")
		r.env.SignalWorkflow(agentapi.SignalApprove, agentapi.ApproveRequest{ToolCallID: "same", Decision: agent.ApprovalAllow})
	})
	res, evs := r.run(in)
	require.Len(t, r.executed, 1)
	require.Equal(t, "a", r.executed[0].Args["path"])
	require.Equal(t, "write done", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, "not b", agent.TextOf(res.Messages[3].Content))
	var positions []int
	for _, e := range evs {
		if e.Type == agent.EventApprovalDecision {
			positions = append(positions, e.Approval.Position)
		}
	}
	require.Equal(t, []int{1, 2}, positions)
}
