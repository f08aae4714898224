package fleettest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/llm"
)

// Issue 26's config drift, with real worker processes: two hosts, one
// started without the provider's environment (a pod of a rollout that
// missed its secret), and 6 sessions x 3 prompts continuing as new after
// every turn. Before the fix, every session whose workflow run resolved on
// the bad host failed for good (6 of 6, 0 of 18 answered); now every
// stage the bad host cannot serve moves to the good one.
func TestConfigDriftSessionsOnTwoHostsOneWithoutKey(t *testing.T) {
	t.Parallel()
	const sessions, prompts = 6, 3
	f := Start(t, Options{Decide: func(r *Request) (Answer, error) {
		return Answer{Text: "answer to " + r.LastUser()}, nil
	}})
	var noKey []string
	for _, kv := range f.Env() {
		if !strings.HasPrefix(kv, "OPENAI_COMPATIBLE_") {
			noKey = append(noKey, kv)
		}
	}
	f.AddHost("host-good", nil)
	bad := f.AddHost("host-bad", noKey)
	f.WaitCurrent(time.Minute)

	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, sessions)
	answered := make([]int, sessions)
	ids := make([]string, sessions)
	for i := range sessions {
		ids[i] = fmt.Sprintf("drift-session-%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			answered[i], errs[i] = runSession(f.Client, f.Queue, f.Workspace, ids[i], prompts)
		}()
	}
	wg.Wait()
	took := time.Since(start)
	failed, total := 0, 0
	for i, err := range errs {
		total += answered[i]
		if err != nil {
			failed++
			t.Errorf("session %d: %v", i, err)
		}
	}
	t.Logf("%d of %d sessions failed, %d of %d prompts answered, in %v",
		failed, sessions, total, sessions*prompts, took.Round(time.Millisecond))
	if failed > 0 {
		t.FailNow()
	}

	// Every session is still open and none of its workflow runs failed,
	// nor any workflow task.
	var runs, moved, drifted int
	for _, id := range ids {
		desc, err := f.Client.DescribeWorkflow(context.Background(), id, "")
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.RawResponse.GetWorkflowExecutionInfo().GetStatus(), id)
		c := chainOf(t, f.Client, id)
		runs += c.runs
		moved += c.movedResolves
		drifted += c.driftFailures
	}
	// What the bad host met, from its log: each activity attempt it failed
	// (the SDK logs "Activity error." with the type and the message naming
	// what it lacks), and each local ResolveRun its workflow tasks moved
	// to the task queue (the workflow's warning).
	attempts := map[string]int{}
	movedHere := 0
	for _, line := range strings.Split(bad.Log(), "\n") {
		switch {
		case strings.Contains(line, "Activity error.") && strings.Contains(line, "lacks "):
			for _, typ := range []string{"ResolveRun", "ModelTurn", "PrepareToolCall", "FinalizeToolCall", "ExecuteToolCall", "CompactContext"} {
				if strings.Contains(line, typ) {
					attempts[typ]++
				}
			}
		case strings.Contains(line, "another worker takes the stage"):
			movedHere++
		}
	}
	t.Logf("%d workflow runs; %d model server requests", runs, f.Model.Requests())
	t.Logf("attempts that hit the bad host and failed with ConfigDrift: %v; local resolves it moved to the task queue: %d (histories: %d ResolveRun activities, %d activities that failed for good with ConfigDrift and were scheduled again)",
		attempts, movedHere, moved, drifted)
	// The bad host took its share of the work: the drift was met, not
	// dodged.
	require.Positive(t, movedHere+attempts["ModelTurn"], "the bad host never met the drift")
	require.LessOrEqual(t, moved, movedHere, "only the bad host moves resolves")
}

// runSession starts a session and sends it n prompts, one after another,
// each answered before the next. It returns how many were answered; an
// error says which was not, and how the session ended if it did.
func runSession(c client.Client, queue, workspace, id string, n int) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{
			LoopConfig:              agent.LoopConfig{Model: agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "fleet"}, Workspace: workspace},
			ContinueAsNewAfterTurns: 1,
		})
	if err != nil {
		return 0, err
	}
	var after int64
	for k := 1; k <= n; k++ {
		text := fmt.Sprintf("%s prompt %d", id, k)
		err := agentclient.UpdateWithOptions(ctx, c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: text}, nil,
			agentclient.UpdateOptions{ID: fmt.Sprintf("%s-%d", id, k)})
		if err != nil {
			return k - 1, fmt.Errorf("prompt %d: %w%s", k, err, closed(c, id))
		}
		var end *agent.Event
		wctx, stop := context.WithTimeout(ctx, 5*time.Minute)
		err = agentclient.Watch(wctx, c, id, "", agentclient.WatchOptions{After: after}, func(e agent.Event) {
			after = e.Seq
			if e.Type == agent.EventAgentEnd && end == nil {
				end = &e
				stop()
			}
		})
		stop()
		if end == nil {
			return k - 1, fmt.Errorf("prompt %d: no agent_end (%v)%s", k, err, closed(c, id))
		}
		last := end.Messages[len(end.Messages)-1]
		if got := agent.TextOf(last.Content); last.StopReason != agent.StopReasonStop || got != "answer to "+text {
			return k - 1, fmt.Errorf("prompt %d: ended %s %q (%s)", k, last.StopReason, got, last.ErrorMessage)
		}
	}
	return n, nil
}

// closed says how a session's latest run closed, if it did.
func closed(c client.Client, id string) string {
	desc, err := c.DescribeWorkflow(context.Background(), id, "")
	if err != nil || desc.RawResponse.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return ""
	}
	info := desc.RawResponse.GetWorkflowExecutionInfo()
	h := c.GetWorkflowHistory(context.Background(), id, info.GetExecution().GetRunId(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	if h.HasNext() {
		if e, err := h.Next(); err == nil {
			if f := e.GetWorkflowExecutionFailedEventAttributes().GetFailure(); f != nil {
				return fmt.Sprintf("; the session %s: %s", info.GetStatus(), f.GetMessage())
			}
		}
	}
	return "; the session " + info.GetStatus().String()
}

// chain is what a session's workflow runs recorded.
type chain struct {
	runs, movedResolves, driftFailures int
}

// chainOf walks a session's workflow runs from the first, failing the test
// on a failed run or workflow task.
func chainOf(t *testing.T, c client.Client, id string) chain {
	t.Helper()
	var ch chain
	runID := ""
	desc, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	first := desc.RawResponse.GetWorkflowExecutionInfo().GetFirstRunId()
	for runID = first; runID != ""; {
		ch.runs++
		iter := c.GetWorkflowHistory(context.Background(), id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
				t.Fatalf("session %s run %s: %v", id, runID, e)
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "ResolveRun" {
					ch.movedResolves++
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
				if e.GetActivityTaskFailedEventAttributes().GetFailure().GetApplicationFailureInfo().GetType() == "ConfigDrift" {
					ch.driftFailures++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				next = e.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
		runID = next
	}
	return ch
}
