package workflows_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// A watched session's prompt end writes two memo upserts, counted in the
// server's history: the excerpt that carries the log up to agent_end, and
// noteRun's (title, lastActivity), which also removes the excerpt
// (log-excerpt-cleared-with-listing). Before, the removal was an upsert of
// its own: three per prompt end.
func TestPromptEndWritesTwoMemoUpserts(t *testing.T) {
	c, id := recordSessionWatchedApprovals(t)
	hist, err := testenv.History(context.Background(), c, id, "")
	require.NoError(t, err)
	require.NotZero(t, markers(hist, "log-excerpt-cleared-with-listing"))
	ends := 0
	evs := hist.GetEvents()
	for i, ev := range evs {
		if lastCarried(ev) != agent.EventAgentEnd {
			continue
		}
		ends++
		memos, upserts := 0, 0
		for _, e := range taskEvents(evs, i) {
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
				memos++
			case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
				upserts++
			}
		}
		t.Logf("prompt end %d (event %d): %d memo upserts (WorkflowPropertiesModified), %d UpsertWorkflowSearchAttributes",
			ends, ev.GetEventId(), memos, upserts)
		require.Equal(t, 2, memos, "the excerpt, and noteRun's upsert that removes it")
	}
	// The first prompt's end may come before the watcher's lease reached
	// a model turn; the second's is carried.
	require.GreaterOrEqual(t, ends, 1)
	d, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	memo := d.RawResponse.GetWorkflowExecutionInfo().GetMemo().GetFields()
	require.NotContains(t, memo, agentapi.MemoLogExcerpt, "the memo keeps no excerpt")
	require.Contains(t, memo, agentapi.MemoLastActivity)
}

// lastCarried is the type of the last event a memo upsert's excerpt
// carries, or "".
func lastCarried(ev *historypb.HistoryEvent) agent.EventType {
	p := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo().GetFields()[agentapi.MemoLogExcerpt]
	var ex agentapi.LogExcerpt
	if p == nil || converter.GetDefaultDataConverter().FromPayload(p, &ex) != nil || len(ex.Events) == 0 {
		return ""
	}
	return ex.Events[len(ex.Events)-1].Type
}

// taskEvents are the events a workflow task's completion wrote with it:
// from its WorkflowTaskCompleted before evs[i] to the next task's
// WorkflowTaskScheduled.
func taskEvents(evs []*historypb.HistoryEvent, i int) []*historypb.HistoryEvent {
	start := i
	for start > 0 && evs[start].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
		start--
	}
	end := i
	for end < len(evs) && evs[end].GetEventType() != enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED {
		end++
	}
	return evs[start:end]
}
