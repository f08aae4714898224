package workflows_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
)

// What the Web UI shows of a run or session, whichever path started it:
// the list's summary (the start's static summary: the prompt's title),
// and the page's current details (the workflow's own: status, turn,
// model, cost). Reproduced before: runs started with agentclient.Start
// (starter run, demo) had no summary ("No summary available").
func TestWebUISummaryAndDetailsOnEveryStartPath(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("one"))})
	ctx := context.Background()
	model := agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}}

	run, err := agentclient.Start(ctx, h.c, "ui-run-"+testenv.Suffix(), h.queue,
		agentapi.AgentLoopInput{LoopConfig: model, Prompt: "fix   the test\n please"})
	require.NoError(t, err)
	h.result(run)
	require.Equal(t, "fix the test please", summary(t, h.c, run.GetID()))
	require.Contains(t, currentDetails(t, h.c, run.GetID()), "**ended** · turn 1 · test/script")

	// A prompt stored as a stub: the summary is its text, not the stub's.
	long := "a long prompt " + strings.Repeat("x", 4000)
	run, err = agentclient.StartWithOptions(ctx, h.c, "ui-run-"+testenv.Suffix(), h.queue,
		agentapi.AgentLoopInput{LoopConfig: model, Prompt: long}, agentclient.StartOptions{Store: testenv.Store(t)})
	require.NoError(t, err)
	h.result(run)
	require.True(t, strings.HasPrefix(summary(t, h.c, run.GetID()), "a long prompt xxx"), summary(t, h.c, run.GetID()))

	sess, _, err := agentclient.StartSession(ctx, h.c, "ui-session-"+testenv.Suffix(), h.queue,
		agentapi.SessionInput{LoopConfig: model}, nil, agentclient.UpdateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.c.TerminateWorkflow(ctx, sess.GetID(), "", "test over") })
	require.Equal(t, "agent session", summary(t, h.c, sess.GetID()))
	require.Contains(t, currentDetails(t, h.c, sess.GetID()), "**idle** · turn 0 · test/script")

	// A session started with its first prompt shows it as its title, in
	// the summary and the details; after continue-as-new, whose run has
	// no static summary (the SDK cannot set one), the details still do.
	sess, _, err = agentclient.StartSession(ctx, h.c, "ui-session-"+testenv.Suffix(), h.queue,
		agentapi.SessionInput{LoopConfig: model, ContinueAsNewAfterTurns: 1}, &agentapi.PromptRequest{Text: "name the session"}, agentclient.UpdateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = h.c.TerminateWorkflow(ctx, sess.GetID(), "", "test over") })
	require.Equal(t, "name the session", summary(t, h.c, sess.GetID()))
	h.waitRunEnd(sess, 1)
	h.waitSeam(sess.GetID(), sess.GetRunID()) // the session continued as new
	require.Contains(t, currentDetails(t, h.c, sess.GetID()), "\n\nname the session")

	// The Temporal CLI starts a session with no summary unless told
	// (--static-summary); the workflow's current details are there all
	// the same.
	cli, err := devserver.FindCLI()
	require.NoError(t, err)
	id := "ui-cli-" + testenv.Suffix()
	out, err := exec.Command(cli, "workflow", "start", "--address", testenv.HostPort(), "--type", agentapi.SessionWorkflow,
		"--task-queue", h.queue, "--workflow-id", id, "--input", `{"model": {"provider": "test", "id": "script"}}`).CombinedOutput()
	require.NoError(t, err, "%s", out)
	t.Cleanup(func() { _ = h.c.TerminateWorkflow(ctx, id, "", "test over") })
	require.Empty(t, summary(t, h.c, id))
	require.Contains(t, currentDetails(t, h.c, id), "**idle** · turn 0 · test/script")
}

// summary is the static summary of a workflow's latest run, as the Web
// UI's list shows it.
func summary(t *testing.T, c client.Client, id string) string {
	t.Helper()
	d, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	var s string
	if p := d.RawResponse.GetExecutionConfig().GetUserMetadata().GetSummary(); p != nil {
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p, &s))
	}
	return s
}

// currentDetails waits for a workflow's current details, as the Web UI's
// page reads them (the __temporal_workflow_metadata Query).
func currentDetails(t *testing.T, c client.Client, id string) string {
	t.Helper()
	var details string
	require.Eventually(t, func() bool {
		resp, err := c.QueryWorkflow(context.Background(), id, "", "__temporal_workflow_metadata")
		if err != nil {
			return false
		}
		var md sdkpb.WorkflowMetadata
		if resp.Get(&md) != nil {
			return false
		}
		details = md.GetCurrentDetails()
		return details != ""
	}, settleTimeout, 50*time.Millisecond)
	return details
}
