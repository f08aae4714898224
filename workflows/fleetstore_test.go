package workflows_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/telemetry"
	"github.com/durable-agents/agentloop/tools"
)

// bigOutput is a tool output well over store.InlineLimit: it travels as a
// stub of the run that made it.
var bigOutput = strings.Repeat("a line of a large tool output\n", 400)

func bigTool() tools.FuncTool {
	return tool("big", func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.TextResult(bigOutput), nil
	})
}

// coldHarness is a harness over st whose worker caches nothing: every
// model turn reads its context from the store, as a worker that never ran
// the run before does, so a blob gone from the store cannot hide in a cache.
func coldHarness(t *testing.T, st store.Blobs, script []llm.ScriptedResponse, ts ...tools.Tool) *harness {
	h := newHarnessStore(t, testenv.Client(t), st, script, ts...)
	h.stopWorker()
	h.acts.NoContextCache = true
	h.startWorker()
	return h
}

// deleteRequest deletes every run of the workflow, as retention does.
func deleteRequest(run client.WorkflowRun) *workflowservice.DeleteWorkflowExecutionRequest {
	return &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace:         "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: run.GetID()},
	}
}

func updatePrompt(id, text string) client.UpdateWorkflowOptions {
	return client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: agentapi.UpdatePrompt, Args: []any{agentapi.PromptRequest{Text: text}},
		WaitForStage: client.WorkflowUpdateStageAccepted,
	}
}

// workflowGone is content-sweep's question: does the workflow exist?
func workflowGone(h *harness) func(context.Context, string) (bool, error) {
	return func(ctx context.Context, id string) (bool, error) {
		_, err := h.c.DescribeWorkflow(ctx, id, "")
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// A session started from another run's result messages (pi's
// continue-from-messages) copies that run's stored content into its own
// scope. The other run is deleted and the sweep deletes its content; the
// session goes on answering prompts with the content whole.
func TestSessionOutlivesTheSweepOfItsSource(t *testing.T) {
	t.Parallel()
	_, st := s3Store(t, store.Options{CacheBytes: -1})
	h := coldHarness(t, st, []llm.ScriptedResponse{
		answer(text("reading it"), call("c1", "big")),
		answer(text("read it")),
		answer(text("first answer")),
		answer(text("second answer")),
	}, bigTool())
	ctx := context.Background()

	source := h.start(h.input("read the big file", "big"))
	var res agentapi.AgentLoopResult // as stored: stubs, not the content
	require.NoError(t, source.Get(ctx, &res))
	var stub *agent.BlobRef
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult && len(m.Content) == 1 && m.Content[0].Blob != nil {
			stub = m.Content[0].Blob
		}
	}
	require.NotNil(t, stub, "the tool output travels as a stub")
	require.Equal(t, source.GetID(), stub.Scope)

	sess := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"big"}}, Messages: res.Messages})
	h.waitState(sess, func(s agentapi.RunState) bool { return s.Status == "idle" })
	copied := *stub
	copied.Scope = sess.GetID()
	got, err := st.Get(ctx, copied)
	require.NoError(t, err, "the session holds its own copy")
	require.Contains(t, string(got), "a large tool output")

	_, err = h.c.WorkflowService().DeleteWorkflowExecution(ctx, deleteRequest(source))
	require.NoError(t, err)
	gone := workflowGone(h)
	require.Eventually(t, func() bool {
		live, err := gone(ctx, source.GetID())
		return err == nil && !live
	}, settleTimeout, 100*time.Millisecond, "the source run is deleted")
	swept, err := st.Sweep(ctx, 0, gone)
	require.NoError(t, err)
	require.Equal(t, []string{source.GetID()}, swept.Deleted)
	_, err = st.Get(ctx, *stub)
	require.ErrorIs(t, err, store.ErrMissing, "the source's content is gone")

	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "what was in it?"}, nil))
	h.waitRunEnd(sess, 1)
	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "and again?"}, nil))
	events := h.waitRunEnd(sess, 2)
	end := events[len(events)-1]
	require.Equal(t, []string{"user:and again?", "assistant:second answer"}, roles(end.Messages))
	require.Equal(t, agent.StopReasonStop, end.Messages[1].StopReason)
	for _, req := range h.requests[2:] {
		require.Equal(t, bigOutput, req.Messages[2].Content[0].Text, "the model sees the output whole")
	}
}

// A blob missing from the store anyway (deleted by hand) becomes a
// placeholder in the model's context, and the session goes on to stop.
// The worker counts it in agentloop_content_lost_total, read here from
// its Prometheus endpoint as an operator's alert would.
func TestMissingBlobBecomesAPlaceholder(t *testing.T) {
	root := t.TempDir()
	st, err := store.Open(root, store.Options{CacheBytes: -1})
	require.NoError(t, err)
	tel, err := telemetry.Setup(context.Background(), telemetry.Options{ServiceName: "agentloop-test", MetricsAddr: "127.0.0.1:0",
		Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	var opts client.Options
	tel.Apply(&opts)
	c, err := client.NewClientFromExisting(testenv.Client(t), opts)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	h := newHarnessStore(t, c, st, []llm.ScriptedResponse{
		answer(text("reading it"), call("c1", "big")),
		answer(text("read it")),
		answer(text("it is lost")),
	}, bigTool())
	h.stopWorker()
	h.acts.NoContextCache = true // as coldHarness: the context comes from the store
	h.startWorker()

	sess := h.startSession(agentapi.SessionInput{LoopConfig: agent.LoopConfig{Tools: []string{"big"}}})
	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "read the big file"}, nil))
	h.waitRunEnd(sess, 1)

	block, err := json.Marshal(agent.TextResult(bigOutput).Content[0])
	require.NoError(t, err)
	sum := sha256.Sum256(block)
	sha := hex.EncodeToString(sum[:])
	require.NoError(t, os.Remove(filepath.Join(root, store.KeyPrefix("", sess.GetID()), sha)))

	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "and now?"}, nil))
	events := h.waitRunEnd(sess, 2)
	end := events[len(events)-1]
	require.Equal(t, []string{"user:and now?", "assistant:it is lost"}, roles(end.Messages))
	require.Equal(t, agent.StopReasonStop, end.Messages[1].StopReason)
	req := h.requests[2]
	require.Equal(t, "toolResult", req.Messages[2].Role)
	require.Equal(t, []agent.Content{agent.Text("[content lost: sha256 " + sha + "]")}, req.Messages[2].Content)
	require.GreaterOrEqual(t, contentLost(t, tel.MetricsURL), 1.0, "the lost blob is counted")
}

// contentLost sums agentloop_content_lost_total over its series.
func contentLost(t *testing.T, url string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	sum := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, "agentloop_content_lost_total") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		sum += v
	}
	return sum
}

// Two workers on one task queue with different stores: the run carries
// its store's id, the worker of the other store refuses the model turn
// with a retryable error naming both ids, and the turn completes once a
// worker of the run's store takes it.
func TestStoreMismatchIsRetriedElsewhere(t *testing.T) {
	stA, err := store.Open(t.TempDir(), store.Options{})
	require.NoError(t, err)
	stB, err := store.Open(t.TempDir(), store.Options{})
	require.NoError(t, err)
	require.NoError(t, stA.LoadID(context.Background()))
	require.NoError(t, stB.LoadID(context.Background()))
	require.NotEqual(t, stA.ID(), stB.ID())
	h := newHarnessStore(t, testenv.Client(t), stA, []llm.ScriptedResponse{
		answer(text("first answer")),
		answer(text("second answer")),
	})
	sess := h.startSession(agentapi.SessionInput{})
	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "one"}, nil))
	h.waitRunEnd(sess, 1)
	h.stopWorker()

	// Worker B: the same model, another store.
	models := llm.NewRegistry()
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{})
	models.Register("test", scripted)
	wB, err := agentworker.New(agentworker.Options{Client: h.c, Store: stB, StoreID: stB.ID(), TaskQueue: h.queue, Models: models})
	require.NoError(t, err)
	require.NoError(t, wB.Start())
	t.Cleanup(wB.Stop)

	u, err := h.c.UpdateWorkflow(context.Background(), updatePrompt(sess.GetID(), "two"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		desc, err := h.c.DescribeWorkflow(context.Background(), sess.GetID(), "")
		if err != nil {
			return false
		}
		for _, p := range desc.RawResponse.GetPendingActivities() {
			msg := p.GetLastFailure().GetMessage()
			if strings.Contains(msg, "content store mismatch") && strings.Contains(msg, stA.ID()) && strings.Contains(msg, stB.ID()) {
				return true
			}
		}
		return false
	}, settleTimeout, 100*time.Millisecond, "the model turn fails on worker B, retryable, naming both stores")
	wB.Stop()
	h.startWorker()
	require.NoError(t, u.Get(context.Background(), nil))
	events := h.waitRunEnd(sess, 2)
	end := events[len(events)-1]
	require.Equal(t, []string{"user:two", "assistant:second answer"}, roles(end.Messages))
}

// A prompt or steer holding a stub of another run's content is refused:
// its content could not be copied before the validator answers.
func TestUpdatesRefuseOtherRunsStubs(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("ok"))})
	sess := h.startSession(agentapi.SessionInput{})
	foreign := agent.Message{Role: agent.RoleUser, Content: []agent.Content{
		agent.StubContent(agent.ContentText, agent.BlobRef{SHA256: strings.Repeat("ab", 32), Size: 3000, Scope: "another-run"})}}
	err := h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Messages: []agent.Message{foreign}}, nil)
	require.ErrorContains(t, err, `holds stored content of workflow "another-run"`)
	err = h.sessionUpdate(sess, agentapi.UpdateSteer, foreign, nil)
	require.ErrorContains(t, err, `holds stored content of workflow "another-run"`)
	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, nil))
	h.waitRunEnd(sess, 1)
}

// A Signal cannot be refused, so one holding a stub of another run's
// content is dropped with a note, as the Updates are refused: taken as it
// is, its content would be lost once that run is deleted and swept. Idle,
// a prompt Signal would start a run with it; busy, it and a steer Signal
// would wait in the queues.
func TestSignalsDropOtherRunsStubs(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("ok")), answer(text("ok again"))})
	sess := h.startSession(agentapi.SessionInput{})
	foreign := agent.Message{Role: agent.RoleUser, Content: []agent.Content{
		agent.StubContent(agent.ContentText, agent.BlobRef{SHA256: strings.Repeat("ab", 32), Size: 3000, Scope: "another-run"})}}
	ctx := context.Background()
	require.NoError(t, h.c.SignalWorkflow(ctx, sess.GetID(), "", agentapi.SignalPrompt, agentapi.PromptRequest{Messages: []agent.Message{foreign}}))
	st := h.waitState(sess, func(s agentapi.RunState) bool { return len(s.Dropped) == 1 })
	require.Equal(t, agentapi.SignalPrompt, st.Dropped[0].Signal)
	require.Contains(t, st.Dropped[0].Reason, `holds stored content of workflow "another-run"`)

	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, nil))
	h.waitRunEnd(sess, 1)
	require.NoError(t, h.sessionUpdate(sess, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "again"}, nil))
	events := h.waitRunEnd(sess, 2)
	require.Equal(t, []string{"user:again", "assistant:ok again"}, roles(events[len(events)-1].Messages), "nothing of the dropped prompt ran")
	require.Len(t, h.requests, 2, "two model turns: the dropped prompt started none")
}

// Busy, a prompt Signal and a steer Signal holding another run's stubs are
// dropped too, and the run ends with what it was given.
func TestSignalsDropOtherRunsStubsWhileBusy(t *testing.T) {
	h, run, release := inputsSession(t, agentapi.SessionInput{}, answer(text("done")))
	foreign := agent.Message{Role: agent.RoleUser, Content: []agent.Content{
		agent.StubContent(agent.ContentText, agent.BlobRef{SHA256: strings.Repeat("cd", 32), Size: 3000, Scope: "another-run"})}}
	ctx := context.Background()
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), "", agentapi.SignalSteer, foreign))
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), "", agentapi.SignalPrompt, agentapi.PromptRequest{Messages: []agent.Message{foreign}}))
	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.Dropped) == 2 })
	require.Equal(t, []string{agentapi.SignalSteer, agentapi.SignalPrompt}, []string{st.Dropped[0].Signal, st.Dropped[1].Signal})
	for _, d := range st.Dropped {
		require.Contains(t, d.Reason, `holds stored content of workflow "another-run"`)
	}
	require.Empty(t, st.Steering)
	require.Empty(t, st.FollowUps)
	release()
	inputsRunEnds(t, h, run, 1)
	require.Equal(t, []string{"go"}, inputsUserTexts(h, 1), "the model never saw the dropped messages")
}
