package fleettest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
	"github.com/durable-agents/agentloop/store"
)

// Tests of three rows of issue 26's table, each with real worker
// processes as hosts: two hosts with different local-directory stores, a
// session outliving the sweep of the run it started from, and three
// 900 KB steering messages while a tool runs.

// bigSize is what a steering message of row 3 holds: 900 KB, under the
// documented 1 MiB limit of one message.
const bigSize = 900 << 10

// rowModel answers "Run: <command>" with a bash call of the command, a
// tool result with "ran it", a request ending in large user messages (the
// steers of row 3) with "steered", and any other prompt with "answer to
// <prompt>". It records what the rows assert on: the largest number of
// large user messages one request held, the length of every tool result
// each request held, and whether any message read "[content lost".
type rowModel struct {
	mu         sync.Mutex
	called     chan struct{} // closed when the first bash call was answered
	callOnce   sync.Once
	maxBig     int
	bigSizes   []int
	bigLetters []string
	toolLens   [][]int
	lost       int
}

func newRowModel() *rowModel { return &rowModel{called: make(chan struct{})} }

func (m *rowModel) decide(req *fleettest.Request) (fleettest.Answer, error) {
	var big, lens []int
	var letters []string
	lost := 0
	for _, msg := range req.Messages {
		text := msg.Text()
		if strings.Contains(text, "[content lost") {
			lost++
		}
		switch {
		case msg.Role == "user" && len(text) >= bigSize:
			big = append(big, len(text))
			letters = append(letters, text[:1])
		case msg.Role == "tool":
			lens = append(lens, len(text))
		}
	}
	m.mu.Lock()
	if len(big) > m.maxBig {
		m.maxBig, m.bigSizes, m.bigLetters = len(big), big, letters
	}
	m.toolLens = append(m.toolLens, lens)
	m.lost += lost
	m.mu.Unlock()

	last := req.Last()
	switch {
	case last.Role == "tool":
		return fleettest.Answer{Text: "ran it"}, nil
	case last.Role == "user" && len(last.Text()) >= bigSize:
		return fleettest.Answer{Text: "steered"}, nil
	}
	prompt := req.LastUser()
	if cmd, ok := strings.CutPrefix(prompt, "Run: "); ok {
		m.callOnce.Do(func() { close(m.called) })
		return fleettest.Answer{Text: "Running it.", Calls: []fleettest.ToolCall{{
			ID: fmt.Sprintf("call_%d", len(req.Messages)), Name: "bash", Args: map[string]any{"command": cmd}}}}, nil
	}
	return fleettest.Answer{Text: "answer to " + prompt}, nil
}

// lastAnswer is the text and stop reason of a run's last message.
func lastAnswer(t *testing.T, events []agent.Event) (string, agent.StopReason) {
	t.Helper()
	end := events[len(events)-1]
	require.Equal(t, agent.EventAgentEnd, end.Type)
	require.NotEmpty(t, end.Messages)
	last := end.Messages[len(end.Messages)-1]
	return agent.TextOf(last.Content), last.StopReason
}

// failureTypes counts, over every run of workflow id, the application
// failure types of its activities' failed attempts: those that failed for
// good (ActivityTaskFailed) and those retried (the last failure an
// ActivityTaskStarted of a later attempt carries), by activity type.
func failureTypes(t *testing.T, c client.Client, id string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	types := map[int64]string{}
	desc, err := c.DescribeWorkflow(context.Background(), id, "")
	require.NoError(t, err)
	for runID := desc.RawResponse.GetWorkflowExecutionInfo().GetFirstRunId(); runID != ""; {
		next := ""
		iter := c.GetWorkflowHistory(context.Background(), id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			e, err := iter.Next()
			require.NoError(t, err)
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				types[e.GetEventId()] = a.GetActivityType().GetName()
			}
			if a := e.GetActivityTaskStartedEventAttributes(); a != nil && a.GetLastFailure() != nil {
				counts[types[a.GetScheduledEventId()]+":"+a.GetLastFailure().GetApplicationFailureInfo().GetType()]++
			}
			if a := e.GetActivityTaskFailedEventAttributes(); a != nil {
				counts[types[a.GetScheduledEventId()]+":"+a.GetFailure().GetApplicationFailureInfo().GetType()]++
			}
			if a := e.GetWorkflowExecutionContinuedAsNewEventAttributes(); a != nil {
				next = a.GetNewExecutionRunId()
			}
		}
		runID = next
	}
	return counts
}

// countType sums the counts of failure type typ over activity types.
func countType(counts map[string]int, typ string) int {
	n := 0
	for k, v := range counts {
		if strings.HasSuffix(k, ":"+typ) {
			n += v
		}
	}
	return n
}

// Row 3 of issue 26's table: two hosts, each with its own local-directory
// store (given explicitly, which the worker accepts with a loopback
// frontend). A session continuing as new after every turn resolves on
// host a, so its content is in a's store. Host b then joins and a stops,
// so b must take the next prompt's model turn: b refuses it with the
// retryable StoreMismatch (before the fix b read the run's context as
// missing and the turn failed ContentMissing). Once a is back, the turn
// and every later prompt are answered, none with lost content.
func TestRowTwoHostsWithTheirOwnStores(t *testing.T) {
	t.Parallel()
	m := newRowModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	dirA, dirB := t.TempDir(), t.TempDir()
	a := f.AddHost("host-a", nil, "-store", dirA)
	f.WaitCurrent(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	id := "row-stores"
	_, st, err := agentclient.StartSession(ctx, f.Client, id, f.Queue,
		agentapi.SessionInput{LoopConfig: config(f), ContinueAsNewAfterTurns: 1},
		&agentapi.PromptRequest{Text: "prompt 1"}, agentclient.UpdateOptions{})
	require.NoError(t, err)
	text, stop := lastAnswer(t, follow(t, ctx, f.Client, id, st.After))
	require.Equal(t, "answer to prompt 1", text)
	require.Equal(t, agent.StopReasonStop, stop)

	// b joins with the other store; a stops, so only b polls.
	b := f.AddHost("host-b", nil, "-store", dirB)
	a.Stop(syscall.SIGTERM, 30*time.Second)
	var st2 agentapi.RunStatus
	require.NoError(t, agentclient.Update(ctx, f.Client, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "prompt 2"}, &st2))
	// The model turn's attempts on b fail StoreMismatch, retryable: it
	// stays pending, naming both stores.
	mismatch := ""
	require.Eventually(t, func() bool {
		desc, err := f.Client.DescribeWorkflow(ctx, id, "")
		if err != nil {
			return false
		}
		for _, p := range desc.RawResponse.GetPendingActivities() {
			if fl := p.GetLastFailure(); fl.GetApplicationFailureInfo().GetType() == activities.ErrStoreMismatch {
				mismatch = p.GetActivityType().GetName() + ": " + fl.GetMessage()
				return true
			}
		}
		return false
	}, 2*time.Minute, 200*time.Millisecond, "host b refuses the run's activity with StoreMismatch")
	t.Logf("pending on host b alone: %s", mismatch)

	require.NoError(t, a.Start())
	f.WaitPolled(agentapi.HostQueue(f.Queue, "host-a"), a, time.Minute)
	text, stop = lastAnswer(t, follow(t, ctx, f.Client, id, st2.After))
	require.Equal(t, "answer to prompt 2", text)
	require.Equal(t, agent.StopReasonStop, stop)

	// Both hosts up: whichever takes the third prompt's stages, it is
	// answered from a's store.
	events := prompt(t, f, id, "prompt 3", 3*time.Minute)
	text, stop = lastAnswer(t, events)
	require.Equal(t, "answer to prompt 3", text)
	require.Equal(t, agent.StopReasonStop, stop)

	counts := failureTypes(t, f.Client, id)
	desc, err := f.Client.DescribeWorkflow(ctx, id, "")
	require.NoError(t, err)
	refusals := strings.Count(b.Log(), "Content store mismatch: refusing the activity")
	t.Logf("3 of 3 prompts answered; failed attempts by activity:type %v; host b's log has %d refusals; %d model requests; session status %s",
		counts, refusals, f.Model.Requests(), desc.RawResponse.GetWorkflowExecutionInfo().GetStatus())
	require.Positive(t, countType(counts, activities.ErrStoreMismatch), "the history records a StoreMismatch attempt")
	require.Zero(t, countType(counts, activities.ErrContentMissing))
	require.Zero(t, m.lost, "the model never saw lost content")
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, desc.RawResponse.GetWorkflowExecutionInfo().GetStatus())
}

// Row 4 of issue 26's table: a session started from a finished AgentLoop's
// result messages, whose tool output (10 KB) travels as a stub of the
// source run's scope. The source run is deleted, as retention does, and
// the content sweep deletes its content; the session's later prompts are
// answered on the real workers, the model seeing the output whole (before
// the fix every later prompt failed "missing from the content store").
func TestRowSessionOutlivesTheSweepOfItsSource(t *testing.T) {
	m := newRowModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	hosts := []*fleettest.Host{f.AddHost("host-a", nil), f.AddHost("host-b", nil)}
	f.WaitCurrent(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The test reads and sweeps the fleet's store as content-sweep does:
	// the same spec and namespace, no cache.
	t.Setenv("AWS_ACCESS_KEY_ID", f.Store.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", f.Store.SecretKey)
	st, err := store.Open(f.Store.Spec, store.Options{CacheBytes: -1, Namespace: "default"})
	require.NoError(t, err)

	const size = 10 << 10
	output := strings.Repeat("x", size)
	source, err := agentclient.Start(ctx, f.Client, "row-sweep-source", f.Queue, agentapi.AgentLoopInput{
		LoopConfig: config(f), Prompt: fmt.Sprintf(`Run: head -c %d /dev/zero | tr '\0' x`, size)})
	require.NoError(t, err)
	var res agentapi.AgentLoopResult // as stored: stubs, not the content
	require.NoError(t, source.Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var stub *agent.BlobRef
	for _, msg := range res.Messages {
		for _, c := range msg.Content {
			if msg.Role == agent.RoleToolResult && c.Blob != nil {
				stub = c.Blob
			}
		}
	}
	require.NotNil(t, stub, "the tool output travels as a stub")
	require.Equal(t, source.GetID(), stub.Scope)

	id := "row-sweep-session"
	_, _, err = agentclient.StartSession(ctx, f.Client, id, f.Queue,
		agentapi.SessionInput{LoopConfig: config(f), Messages: res.Messages, ContinueAsNewAfterTurns: 1}, nil, agentclient.UpdateOptions{})
	require.NoError(t, err)
	// The session copies the source's content into its own scope as it
	// starts.
	copied := *stub
	copied.Scope = id
	require.Eventually(t, func() bool {
		got, err := st.Get(ctx, copied)
		return err == nil && strings.Contains(string(got), output)
	}, time.Minute, 200*time.Millisecond, "the session holds its own copy")

	_, err = f.Client.WorkflowService().DeleteWorkflowExecution(ctx, &workflowservice.DeleteWorkflowExecutionRequest{
		Namespace: "default", WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: source.GetID()}})
	require.NoError(t, err)
	// content-sweep's question: only NotFound means gone.
	exists := func(ctx context.Context, id string) (bool, error) {
		_, err := f.Client.DescribeWorkflow(ctx, id, "")
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return false, nil
		}
		return err == nil, err
	}
	require.Eventually(t, func() bool {
		live, err := exists(ctx, source.GetID())
		return err == nil && !live
	}, time.Minute, 200*time.Millisecond, "the source run is deleted")
	swept, err := st.Sweep(ctx, 0, exists)
	require.NoError(t, err)
	t.Logf("sweep: %d scopes, deleted %v, %d live", swept.Scopes, swept.Deleted, swept.Live)
	require.Equal(t, []string{source.GetID()}, swept.Deleted)
	_, err = st.Get(ctx, *stub)
	require.ErrorIs(t, err, store.ErrMissing, "the source's content is gone")

	// Both hosts restart, so no worker's context or blob cache holds the
	// content: the later prompts read it from the store.
	for _, h := range hosts {
		h.Stop(syscall.SIGTERM, 30*time.Second)
		require.NoError(t, h.Start())
		f.WaitPolled(agentapi.HostQueue(f.Queue, h.ID), h, time.Minute)
	}
	m.mu.Lock()
	before := len(m.toolLens)
	m.mu.Unlock()
	for _, p := range []string{"what was in it?", "and again?"} {
		text, stop := lastAnswer(t, prompt(t, f, id, p, 2*time.Minute))
		require.Equal(t, "answer to "+p, text)
		require.Equal(t, agent.StopReasonStop, stop)
	}
	m.mu.Lock()
	after := m.toolLens[before:]
	m.mu.Unlock()
	require.Len(t, after, 2)
	for _, lens := range after {
		require.Len(t, lens, 1)
		require.GreaterOrEqual(t, lens[0], size, "the model sees the output whole")
	}
	require.Zero(t, m.lost)
	t.Logf("2 of 2 prompts after the sweep answered; the model saw tool results of %v bytes", after)
}

// Row 5 of issue 26's table: three 900 KB steering messages, sent inline
// with the raw client's UpdateWorkflow while a tool runs on a real worker,
// steering mode all. Before the fix the next model turn's input exceeded
// the server's size limit and the server terminated the session; now the
// session goes on and the model receives all three.
func TestRowThreeLargeSteers(t *testing.T) {
	t.Parallel()
	m := newRowModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	f.AddHost("host-a", nil)
	f.AddHost("host-b", nil)
	f.WaitCurrent(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	id := "row-steers"
	cfg := config(f)
	cfg.SteeringMode = agent.QueueAll
	_, st, err := agentclient.StartSession(ctx, f.Client, id, f.Queue, agentapi.SessionInput{LoopConfig: cfg},
		&agentapi.PromptRequest{Text: "Run: sleep 15"}, agentclient.UpdateOptions{})
	require.NoError(t, err)
	select {
	case <-m.called:
	case <-ctx.Done():
		t.Fatal("the model never called the tool")
	}
	// The tool runs for 15 s; the three steers are sent meanwhile, each
	// distinct, each completed (queued) before the next.
	for i, letter := range []string{"a", "b", "c"} {
		msg := agent.Message{Role: agent.RoleUser, Content: []agent.Content{agent.Text(strings.Repeat(letter, bigSize))}}
		h, err := f.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID: id, UpdateName: agentapi.UpdateSteer, Args: []any{msg},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		require.NoError(t, err, "steer %d", i+1)
		var qs agentapi.QueueStatus
		require.NoError(t, h.Get(ctx, &qs), "steer %d", i+1)
		t.Logf("steer %d queued: %+v", i+1, qs)
	}
	events := follow(t, ctx, f.Client, id, st.After)
	text, stop := lastAnswer(t, events)
	require.Equal(t, "steered", text)
	require.Equal(t, agent.StopReasonStop, stop)

	desc, err := f.Client.WorkflowService().DescribeWorkflowExecution(ctx, &workflowservice.DescribeWorkflowExecutionRequest{
		Namespace: "default", Execution: &commonpb.WorkflowExecution{WorkflowId: id}})
	require.NoError(t, err)
	info := desc.GetWorkflowExecutionInfo()
	m.mu.Lock()
	maxBig, sizes, letters := m.maxBig, m.bigSizes, m.bigLetters
	m.mu.Unlock()
	t.Logf("the model received %d large user messages in one request (%v bytes); session %s, history %d events, %d bytes",
		maxBig, sizes, info.GetStatus(), info.GetHistoryLength(), info.GetHistorySizeBytes())
	require.Equal(t, 3, maxBig, "the model receives all three steers")
	require.Equal(t, []int{bigSize, bigSize, bigSize}, sizes, "whole")
	require.Equal(t, []string{"a", "b", "c"}, letters, "in the order sent")
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, info.GetStatus())
}
