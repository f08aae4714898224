package workflows_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// The content store (a real S3-compatible server) goes away while a tool's
// 48 KB output waits to be stored: the stage waits and retries, heartbeating,
// with nothing failed in history; once the store is back the run goes on
// and ends as if nothing happened, the output whole.
func TestStoreOutageDuringARun(t *testing.T) {
	t.Parallel()
	srv, st := s3Store(t, store.Options{})

	output := strings.Repeat("forty-eight kilobytes of output\n", 1500)
	release := make(chan struct{})
	h := newHarnessStore(t, testenv.Client(t), st, []llm.ScriptedResponse{
		answer(text("running it"), call("big", "big")),
		answer(text("read it all")),
	}, tool("big", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		select {
		case <-release:
			return agent.TextResult(output), nil
		case <-ctx.Done():
			return agent.ToolResult{}, ctx.Err()
		}
	}))
	run := h.start(h.input("go", "big"))
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingToolCalls) == 1 })

	srv.Stop()
	close(release)
	// The tool is done; its output cannot be stored. The activity stays
	// pending on its first attempt (its heartbeats keep it alive) and
	// nothing fails.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		desc, err := h.c.DescribeWorkflow(context.Background(), run.GetID(), run.GetRunID())
		require.NoError(t, err)
		require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.RawResponse.GetWorkflowExecutionInfo().GetStatus())
		pending := desc.RawResponse.GetPendingActivities()
		require.Len(t, pending, 1)
		require.EqualValues(t, 1, pending[0].GetAttempt(), "no attempt failed")
		time.Sleep(200 * time.Millisecond)
	}
	srv.Restart()

	// This run's content is in its own store, not the shared test store
	// testenv.Result reads.
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(context.Background(), &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "read it all", agent.TextOf(lastMessage(res).Content))
	last := h.requests[len(h.requests)-1]
	require.Equal(t, output, agent.TextOf(last.Messages[len(last.Messages)-1].Content), "the model got the whole output")

	events, err := agentclient.Events(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	events, err = agentclient.ResolveEvents(context.Background(), st, events)
	require.NoError(t, err)
	for _, e := range events {
		if e.Type == agent.EventToolExecutionEnd {
			require.Equal(t, output, agent.TextOf(e.Result.Content))
		}
	}
	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	requireNothingFailed(t, hist, "the outage failed nothing")
}

// Content that is gone from the store is a clear, non-retryable error that
// names its hash, never a silently empty context: the model turn ends the
// run with it after one attempt.
func TestMissingContentIsAClearError(t *testing.T) {
	dir := t.TempDir()
	st, err := store.Open(dir, store.Options{CacheBytes: -1})
	require.NoError(t, err)
	output := strings.Repeat("output that will be lost\n", 2000)
	h := newHarnessStore(t, testenv.Client(t), st, []llm.ScriptedResponse{
		answer(call("big", "big")),
		answer(text("read it")),
		answer(text("never sent")),
	}, tool("big", func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.TextResult(output), nil
	}))
	h.acts.NoContextCache = true
	first := h.start(h.input("go", "big"))
	var res agentapi.AgentLoopResult
	require.NoError(t, first.Get(context.Background(), &res))
	stub := res.Messages[2].Content[0]
	require.NotNil(t, stub.Blob, "the output is a stub in the result")

	// Lose the blob, then start a run from the messages that name it: the
	// run copies another run's content into its own scope first, and
	// refuses the input, naming the blob, when it is gone. (A blob lost
	// from the run's own transcript becomes a placeholder instead:
	// TestMissingBlobBecomesAPlaceholder.)
	require.NoError(t, os.Remove(filepath.Join(dir, store.KeyPrefix("", first.GetID()), stub.Blob.SHA256)))
	in := h.input("and now?", "big")
	in.Messages = res.Messages
	second := h.start(in)
	err = second.Get(context.Background(), &res)
	require.ErrorContains(t, err, "invalid input")
	require.ErrorContains(t, err, "sha256:"+stub.Blob.SHA256)
	require.ErrorContains(t, err, "missing from the content store")
	require.Equal(t, 2, int(h.modelCalls.Load()), "refused before the model was called")
	hist, err := testenv.History(context.Background(), h.c, second.GetID(), second.GetRunID())
	require.NoError(t, err)
	attempts := 0
	for _, e := range hist.GetEvents() {
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			attempts = int(a.GetAttempt())
		}
	}
	require.Equal(t, 1, attempts, "not retried")
}

// The store goes away while the model answers: the turn's context cannot be
// saved as a segment. The answer is kept (the turn completes on its first
// attempt after the save's grace, the model is not asked again) and the
// run ends with it; the segments stay as they were.
func TestFailedSegmentSaveKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	srv, st := s3Store(t, store.Options{})

	h := newHarnessStore(t, testenv.Client(t), st, []llm.ScriptedResponse{
		answer(text("stopping the store"), call("halt", "halt")),
		answer(text("done")),
	}, tool("halt", func(context.Context, tools.Call) (agent.ToolResult, error) {
		srv.Stop()
		return agent.TextResult("stopped"), nil
	}))
	run := h.start(h.input("go", "halt"))
	var res agentapi.AgentLoopResult
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	final := lastMessage(res)
	require.Equal(t, "done", agent.TextOf(final.Content))
	require.NotNil(t, final.Usage)
	require.EqualValues(t, 2, h.modelCalls.Load(), "the answer was not asked for again")

	hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	requireNothingFailed(t, hist, "nothing failed")
	var turns []*historypb.HistoryEvent
	for _, e := range hist.GetEvents() {
		if e.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED {
			turns = append(turns, e)
		}
	}
	var outs []activities.ModelTurnOutput
	for _, e := range hist.GetEvents() {
		if e.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED ||
			e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() != "ModelTurn" {
			continue
		}
		for _, c := range turns {
			if c.GetActivityTaskCompletedEventAttributes().GetScheduledEventId() == e.GetEventId() {
				var out activities.ModelTurnOutput
				require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(c.GetActivityTaskCompletedEventAttributes().GetResult(), &out))
				outs = append(outs, out)
			}
		}
	}
	require.Len(t, outs, 2, "both turns completed")
	require.NotEmpty(t, outs[0].Segments, "the first turn's context was stored")
	require.Empty(t, outs[1].Segments, "the second's could not be: the next turn would send it again")
	require.Equal(t, "done", agent.TextOf(outs[1].Message.Content))
}

// outageModel bills its first call and cuts it, stops the store and
// refuses its second call unbilled (a 503) once the turn's save has had to
// wait for the store, then restarts the store and answers.
type outageModel struct {
	m     llm.Model
	srv   *s3server.Server
	calls atomic.Int32
}

func (o *outageModel) Stream(ctx context.Context, req llm.Request, emit func(agent.StreamEvent)) (agent.Message, error) {
	switch o.calls.Add(1) {
	case 1:
		o.srv.Stop() // the next attempt's save finds no store
		u := cutUsage
		return agent.Message{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("half an ans")}, Usage: &u},
			&llm.Error{Kind: llm.ErrUnavailable, Message: "stream cut", RetryAfter: 10 * time.Millisecond}
	case 2:
		// Long enough for the save's retries to heartbeat (the first
		// after 100 ms), then the provider refuses before reading.
		time.Sleep(time.Second)
		o.srv.Restart()
		return agent.Message{Role: agent.RoleAssistant}, &llm.Error{Kind: llm.ErrUnavailable, Message: "503", RetryAfter: 10 * time.Millisecond}
	}
	msg, err := o.m.Stream(ctx, req, emit)
	u := callUsage
	msg.Usage = &u
	return msg, err
}

// A model turn's first attempt is billed and cut; its second waits for the
// store (heartbeating) and is refused unbilled; the third answers. The
// run's usage still counts the first attempt: the store's retry heartbeats
// carry what earlier attempts were billed, where the server keeps it for
// the next attempt.
func TestBilledAttemptSurvivesAStoreOutageHeartbeat(t *testing.T) {
	t.Parallel()
	srv, st := s3Store(t, store.Options{})
	h := newHarnessStore(t, testenv.Client(t), st, []llm.ScriptedResponse{answer(text("done"))})
	scripted, err := h.scripted.Model("script")
	require.NoError(t, err)
	m := &outageModel{m: scripted, srv: srv}
	models := llm.NewRegistry()
	models.Register("test", llm.ProviderFunc(func(string) (llm.Model, error) { return m, nil }))
	h.stopWorker()
	h.acts.Models = models
	h.startWorker()

	run := h.start(h.input("go"))
	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(context.Background(), &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.EqualValues(t, 3, m.calls.Load())
	require.Equal(t, cutUsage.Add(callUsage), res.Usage, "the cut attempt's billed usage counts")
}

// A steer Update with content over the inline limit arrives while the
// store is down: its StoreInputs local activity waits for the store
// (retrying, within the Update's bound), the Update completes once the
// store is back, and the model gets the content whole.
func TestLargeSteerWaitsOutAStoreOutage(t *testing.T) {
	t.Parallel()
	srv, st := s3Store(t, store.Options{})
	started, release := make(chan struct{}), make(chan struct{})
	h := newHarnessStore(t, testenv.Client(t), st, []llm.ScriptedResponse{
		answer(call("c1", "slow")), answer(text("steered")),
	}, tool("slow", func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return agent.TextResult("slow done"), nil
	}))
	run := h.start(h.input("go", "slow"))
	<-started

	large := strings.Repeat("a large steering message\n", 2000) // 50 KB: stored, not inline
	srv.Stop()
	steered := make(chan error, 1)
	go func() {
		_, err := update(t, h.c, run, agentapi.UpdateSteer, agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(large)}})
		steered <- err
	}()
	select {
	case err := <-steered:
		t.Fatalf("the Update completed with the store down: %v", err)
	case <-time.After(3 * time.Second):
	}
	srv.Restart()
	require.NoError(t, <-steered)
	close(release)

	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(context.Background(), &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	texts := inputsUserTexts(h, 1)
	require.Equal(t, large, texts[len(texts)-1], "the model got the steering message whole")
}

// s3Store starts an S3-compatible server and opens a content store on it.
func s3Store(t *testing.T, o store.Options) (*s3server.Server, *store.Store) {
	t.Helper()
	srv := s3server.Start(t)
	return srv, openS3(t, srv, o)
}

// openS3 opens a content store on srv as store.Open opens srv.Spec, with
// the server's credentials given directly instead of through AWS_*
// variables, which would keep the test from running in parallel.
func openS3(t *testing.T, srv *s3server.Server, o store.Options) *store.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := store.NewS3(ctx, store.S3Config{Bucket: srv.Bucket, Endpoint: srv.Endpoint,
		Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	require.NoError(t, err)
	st, err := store.New(b, o)
	require.NoError(t, err)
	return st
}

// requireNothingFailed checks that no activity failed or timed out and no
// workflow task failed in hist.
func requireNothingFailed(t *testing.T, hist *historypb.History, msg string) {
	t.Helper()
	for _, e := range hist.GetEvents() {
		require.NotContains(t, []enumspb.EventType{enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT,
			enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED}, e.GetEventType(), msg)
	}
}
