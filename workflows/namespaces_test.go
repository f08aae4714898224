package workflows_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
)

// Two namespaces share one S3 store and a workflow id. The id's run in
// namespace default is deleted and default's content swept, asking
// default's Temporal, as content-sweep does; namespace b's session of the
// same id keeps its content and goes on answering with it whole.
func TestSweepOfOneNamespaceLeavesAnother(t *testing.T) {
	ctx := context.Background()
	srv, stA := s3Store(t, store.Options{CacheBytes: -1})
	stB := openS3(t, srv, store.Options{CacheBytes: -1, Namespace: "fleet-b"})

	base := testenv.Client(t)
	_, err := base.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: "fleet-b", WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour)})
	var exists *serviceerror.NamespaceAlreadyExists
	if !errors.As(err, &exists) {
		require.NoError(t, err)
	}
	cB, err := client.NewClientFromExisting(base, client.Options{Namespace: "fleet-b", Logger: testenv.Logger()})
	require.NoError(t, err)
	t.Cleanup(cB.Close) // else its share of the connection keeps it open after the shared client's Close

	hA := coldHarness(t, stA, []llm.ScriptedResponse{
		answer(text("reading it"), call("c1", "big")),
		answer(text("read it")),
	}, bigTool())
	hB := newHarnessStore(t, cB, stB, []llm.ScriptedResponse{
		answer(text("reading it"), call("c1", "big")),
		answer(text("read it")),
		answer(text("still here")),
	}, bigTool())
	hB.stopWorker()
	hB.acts.NoContextCache = true
	hB.startWorker()

	id := "shared-" + testenv.Suffix()
	runA, err := hA.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: hA.queue}, agentapi.AgentLoopWorkflow, hA.input("read the big file", "big"))
	require.NoError(t, err)
	require.NoError(t, runA.Get(ctx, nil))

	var sessB client.WorkflowRun
	require.Eventually(t, func() bool { // a new namespace takes a moment to reach every service
		sessB, err = cB.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: hB.queue}, agentapi.SessionWorkflow,
			agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}, Tools: []string{"big"}}})
		return err == nil
	}, settleTimeout, 500*time.Millisecond, "start in namespace fleet-b: %v", err)
	t.Cleanup(func() { _ = cB.TerminateWorkflow(context.Background(), id, "", "test over") })
	require.NoError(t, hB.sessionUpdate(sessB, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "read the big file"}, nil))
	hB.waitRunEnd(sessB, 1)

	_, err = base.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id}})
	require.NoError(t, err)
	gone := workflowGone(hA)
	require.Eventually(t, func() bool {
		live, err := gone(ctx, id)
		return err == nil && !live
	}, settleTimeout, 100*time.Millisecond, "the run of namespace default is deleted")
	swept, err := stA.Sweep(ctx, 0, gone)
	require.NoError(t, err)
	require.Equal(t, []string{id}, swept.Deleted)
	require.Equal(t, 1, swept.Other, "fleet-b's scope of the same id is not looked at")

	require.NoError(t, hB.sessionUpdate(sessB, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "and now?"}, nil))
	events := hB.waitRunEnd(sessB, 2)
	end := events[len(events)-1]
	require.Equal(t, []string{"user:and now?", "assistant:still here"}, roles(end.Messages))
	last := hB.requests[len(hB.requests)-1]
	require.Equal(t, bigOutput, last.Messages[2].Content[0].Text, "fleet-b's content of the id is whole")
}
