package workflows_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// incompressible returns n bytes of base64 text that differ for each seed,
// so the content store's compression and dedupe cannot hide a copy.
func incompressible(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, seed))
	raw := make([]byte, n*3/4+3)
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	return base64.StdEncoding.EncodeToString(raw)[:n]
}

// A session of many prompts, each running a tool that returns 48 KB (pi's
// output limit is 50 KB), keeps that output out of history: history grows
// by a stub per output, the content store holds each output once, and the
// session continues as new without carrying its transcript. This is the
// CI-sized variant of the 1,000-prompt budget (go run ./bench content):
// past the prompt (84) at which sessions used to stall for good.
func TestSessionLargeToolOutputsStayOutOfHistory(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	if testing.Short() {
		t.Skip("150 prompts")
	}
	const prompts = 150
	const outputBytes = 48_000
	var script []llm.ScriptedResponse
	for i := 0; i < prompts; i++ {
		script = append(script, answer(text("looking"), call(fmt.Sprintf("c%d", i), "dump")), answer(text(fmt.Sprintf("done %d", i))))
	}
	calls := 0
	h := newHarness(t, script, tool("dump", func(context.Context, tools.Call) (agent.ToolResult, error) {
		calls++
		return agent.TextResult(incompressible(uint64(calls), outputBytes)), nil
	}))
	run := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"dump"}}, ContinueAsNewAfterTurns: 100})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ended := make(chan agent.Event, prompts)
	watchErr := make(chan error, 1)
	var outputs []string
	go func() {
		watchErr <- agentclient.Watch(ctx, h.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
			if e.Type == agent.EventToolExecutionEnd {
				outputs = append(outputs, agent.TextOf(e.Result.Content))
			}
			if e.Type == agent.EventAgentEnd {
				ended <- e
			}
		})
	}()
	for i := 0; i < prompts; i++ {
		require.NoError(t, h.sessionUpdate(run, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: fmt.Sprintf("prompt %d", i)}, nil))
		select {
		case e := <-ended:
			require.Len(t, e.Messages, 4, "prompt %d: prompt, tool call, result, answer", i)
			require.Equal(t, fmt.Sprintf("done %d", i), agent.TextOf(e.Messages[3].Content))
			require.Equal(t, incompressible(uint64(i+1), outputBytes), agent.TextOf(e.Messages[2].Content),
				"prompt %d: the agent_end event resolves to the whole output", i)
		case err := <-watchErr:
			t.Fatalf("watch ended after %d prompts: %v", i, err)
		case <-ctx.Done():
			t.Fatalf("prompt %d not answered", i)
		}
	}
	cancel()
	require.Len(t, outputs, prompts)
	for i, o := range outputs {
		require.Equal(t, incompressible(uint64(i+1), outputBytes), o, "tool_execution_end %d resolves to the whole output", i)
	}
	// The model got every output in full, however the workflow held it.
	last := h.requests[len(h.requests)-1]
	require.Equal(t, incompressible(prompts, outputBytes), agent.TextOf(last.Messages[len(last.Messages)-1].Content))

	runs := chainRuns(t, h, run.GetID(), 3)
	var total int64
	for _, r := range runs {
		size := r.GetHistorySizeBytes()
		if r.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			desc, err := h.c.DescribeWorkflow(context.Background(), run.GetID(), r.GetExecution().GetRunId())
			require.NoError(t, err)
			size = desc.RawResponse.GetWorkflowExecutionInfo().GetHistorySizeBytes()
		}
		t.Logf("run %s: %s, %d events, %d bytes", r.GetExecution().GetRunId(), r.GetStatus(), r.GetHistoryLength(), size)
		require.Less(t, size, int64(4<<20), "no run over 4 MB")
		total += size
		hist, err := testenv.History(context.Background(), h.c, run.GetID(), r.GetExecution().GetRunId())
		require.NoError(t, err)
		for _, e := range hist.GetEvents() {
			require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, e.GetEventType(), "no workflow task failed")
		}
	}
	content := int64(prompts * outputBytes)
	t.Logf("history %d bytes in %d runs for %d bytes of tool output (%.2fx)", total, len(runs), content, float64(total)/float64(content))
	// The 1,000-prompt budget is 20 MB in all: 20 KB a prompt.
	require.Less(t, total, int64(prompts*20_000), "history grows by a stub per output, not by the output")

	// The store holds each output once (compressed, it is ~75% of the
	// text), and the transcript's segments next to them.
	var stored int64
	big := 0
	dir := filepath.Join(testenv.StoreDir(), store.KeyPrefix("", run.GetID()))
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		stored += fi.Size()
		if fi.Size() > outputBytes/2 {
			big++
		}
		return nil
	}))
	t.Logf("content store: %d bytes (%.2fx the output), %d blobs the size of an output", stored, float64(stored)/float64(content), big)
	require.Equal(t, prompts, big, "each output is stored once")
	require.LessOrEqual(t, float64(stored), 1.2*float64(content))
}

// chainRuns lists every run of a workflow id from visibility, waiting for
// at least min of them.
func chainRuns(t *testing.T, h *harness, id string, min int) []*workflowpb.WorkflowExecutionInfo {
	t.Helper()
	var runs []*workflowpb.WorkflowExecutionInfo
	require.Eventually(t, func() bool {
		resp, err := h.c.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf("WorkflowId = '%s'", id),
		})
		require.NoError(t, err)
		runs = resp.GetExecutions()
		closedSized := true
		for _, r := range runs {
			if r.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && r.GetHistorySizeBytes() == 0 {
				closedSized = false
			}
		}
		return len(runs) >= min && closedSized
	}, 10*time.Second, 100*time.Millisecond, "visibility lists every run of %s", id)
	return runs
}

// An AgentLoop run of many turns continues as new between turns (here every
// 100 turns; on a real server also when it suggests it) and ends "stop"; a
// watcher reads one gap-free stream whose agent_end holds every message of
// the run, and the result reports the whole run. The 2,000-turn variant is
// in the bench (go run ./bench content).
func TestAgentLoopContinuesAsNewWithoutAGap(t *testing.T) {
	t.Parallel() // one of the long tests: they run beside each other
	if testing.Short() {
		t.Skip("300 turns")
	}
	const turns = 300
	var script []llm.ScriptedResponse
	for i := 0; i < turns; i++ {
		script = append(script, answer(text("step"), call(fmt.Sprintf("c%d", i), "tick")))
	}
	script = append(script, answer(text("finished")))
	ticks := 0
	h := newHarness(t, script, tool("tick", func(context.Context, tools.Call) (agent.ToolResult, error) {
		ticks++
		return agent.TextResult(fmt.Sprintf("tock %d", ticks)), nil
	}))
	in := h.input("go", "tick")
	in.ContinueAsNewAfterTurns = 100
	run := h.start(in)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var seqs []int64
	var end agent.Event
	err := agentclient.Watch(ctx, h.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Store: testenv.Store(t)}, func(e agent.Event) {
		seqs = append(seqs, e.Seq)
		if e.Type == agent.EventAgentEnd {
			end = e
		}
	})
	require.NoError(t, err, "the watch ends with the run")
	for i, s := range seqs {
		require.EqualValues(t, i+1, s, "event sequence numbers are gap-free across continue-as-new")
	}
	require.Len(t, end.Messages, 1+2*turns+1, "agent_end holds every message of the run, those before the seams too")
	require.Equal(t, "tock 1", agent.TextOf(end.Messages[2].Content))
	require.Equal(t, "finished", agent.TextOf(end.Messages[len(end.Messages)-1].Content))
	require.Equal(t, turns, ticks, "no tool call ran twice or was lost at a seam")

	res := testenv.Result(t, h.c.GetWorkflow(context.Background(), run.GetID(), ""), time.Minute)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, turns+1, res.Turns)
	require.Equal(t, "finished", agent.TextOf(res.Messages[len(res.Messages)-1].Content))
	require.Equal(t, 1+2*turns+1, res.OmittedMessages+len(res.Messages), "the result counts the messages before the last seam")

	runs := chainRuns(t, h, run.GetID(), turns/100+1)
	for _, r := range runs {
		t.Logf("run %s: %s, %d events, %d bytes", r.GetExecution().GetRunId(), r.GetStatus(), r.GetHistoryLength(), r.GetHistorySizeBytes())
		require.Less(t, r.GetHistoryLength(), int64(2000), "each run's history stays short")
	}
}
