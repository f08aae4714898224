package workflows_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
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
	run := h.startSession(workflows.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"dump"}}, ContinueAsNewAfterTurns: 100})

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
		require.NoError(t, h.sessionUpdate(run, workflows.UpdatePrompt, workflows.PromptRequest{Text: fmt.Sprintf("prompt %d", i)}, nil))
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
			desc, err := h.c.DescribeWorkflowExecution(context.Background(), run.GetID(), r.GetExecution().GetRunId())
			require.NoError(t, err)
			size = desc.GetWorkflowExecutionInfo().GetHistorySizeBytes()
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
	dir := filepath.Join(testenv.StoreDir(), url.PathEscape(run.GetID()))
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
