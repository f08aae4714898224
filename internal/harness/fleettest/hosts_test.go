package fleettest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/fleettest"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/workflows"
)

func TestMain(m *testing.M) { fleettest.Main(m) }

// hostModel answers "Run: <command>" with a bash call of the command and
// then the command's output. A call that did not run because its host is
// unavailable is called again, as a model would, once. A prompt with
// "[gate]" waits for the gate before its first answer.
type hostModel struct {
	gate    chan struct{}
	waiting chan struct{} // closed when a gated request came
	once    sync.Once
	mu      sync.Mutex
	saw     []string // tool results the model saw, in order
}

func newHostModel() *hostModel {
	return &hostModel{gate: make(chan struct{}), waiting: make(chan struct{})}
}

func (m *hostModel) decide(req *fleettest.Request) (fleettest.Answer, error) {
	prompt := req.LastUser()
	cmd, ok := strings.CutPrefix(strings.TrimPrefix(prompt, "[gate] "), "Run: ")
	if !ok {
		return fleettest.Answer{}, fmt.Errorf("no command in %q", prompt)
	}
	call := fleettest.Answer{Text: "Running it.", Calls: []fleettest.ToolCall{{
		ID: fmt.Sprintf("call_%d", len(req.Messages)), Name: "bash", Args: map[string]any{"command": cmd}}}}
	last := req.Last()
	if last.Role != "tool" {
		if strings.HasPrefix(prompt, "[gate] ") {
			m.once.Do(func() { close(m.waiting) })
			<-m.gate
		}
		return call, nil
	}
	out := last.Text()
	m.mu.Lock()
	m.saw = append(m.saw, out)
	m.mu.Unlock()
	if strings.Contains(out, "is unavailable") && !strings.Contains(req.Messages[len(req.Messages)-3].Text(), "is unavailable") {
		call.Text = "That host is gone; running it again."
		return call, nil
	}
	return fleettest.Answer{Text: "Output: " + strings.TrimSpace(out)}, nil
}

func (m *hostModel) sawAll() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.saw...)
}

func config(f *fleettest.Fleet) agent.LoopConfig {
	return agent.LoopConfig{
		Model:     agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: "fleet"},
		Tools:     []string{"bash"},
		Workspace: f.Workspace,
	}
}

// prompt sends a session a prompt and returns the events of its run, once
// the run has ended.
func prompt(t *testing.T, f *fleettest.Fleet, id, text string, timeout time.Duration) []agent.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var st agentapi.RunStatus
	require.NoError(t, agentclient.Update(ctx, f.Client, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: text}, &st))
	return follow(t, ctx, f.Client, id, st.After)
}

// follow collects a session's events after after up to its next agent_end.
func follow(t *testing.T, ctx context.Context, c client.Client, id string, after int64) []agent.Event {
	t.Helper()
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	var events []agent.Event
	ended := false
	err := agentclient.Follow(fctx, c, id, "", after, func(e agent.Event) {
		if ended {
			return
		}
		events = append(events, e)
		if e.Type == agent.EventAgentEnd {
			ended = true
			stop()
		}
	})
	if !ended {
		t.Fatalf("session %s: no agent_end (%d events): %v", id, len(events), err)
	}
	return events
}

// toolEnds are the run's tool results, in order.
func toolEnds(events []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range events {
		if e.Type == agent.EventToolExecutionEnd {
			out = append(out, e)
		}
	}
	return out
}

func resultText(e agent.Event) string {
	if e.Result == nil {
		return ""
	}
	return agent.TextOf(e.Result.Content)
}

// executions lists, per ExecuteToolCall of a workflow id (every run of
// it), the queue it was scheduled on and the identity of the worker that
// started it ("" when none did).
type execution struct{ queue, worker string }

func executions(t *testing.T, c client.Client, id string) []execution {
	t.Helper()
	var out []execution
	scheduled := map[int64]int{}
	iter := c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historypb.History
	for iter.HasNext() {
		e, err := iter.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, e)
	}
	for _, e := range h.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ExecuteToolCall" {
			scheduled[e.GetEventId()] = len(out)
			out = append(out, execution{queue: a.GetTaskQueue().GetName()})
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil {
			if i, ok := scheduled[a.GetScheduledEventId()]; ok {
				out[i].worker = a.GetIdentity()
			}
		}
	}
	return out
}

// sessionOnHostA starts a fleet whose model answers at once, with one host
// a, and session id on it, whose first prompt runs one tool call on a's
// queue. ctx, which ends after timeout, bounds the rest of the test.
func sessionOnHostA(t *testing.T, id string, timeout time.Duration) (f *fleettest.Fleet, a *fleettest.Host, ctx context.Context) {
	t.Helper()
	m := newHostModel()
	close(m.gate)
	f = fleettest.Start(t, fleettest.Options{Decide: m.decide})
	a = f.AddHost("host-a", nil)
	f.WaitCurrent(time.Minute)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	_, st, err := agentclient.StartSession(ctx, f.Client, id, f.Queue, agentapi.SessionInput{LoopConfig: config(f)},
		&agentapi.PromptRequest{Text: "Run: echo one"}, agentclient.UpdateOptions{})
	require.NoError(t, err)
	ends := toolEnds(follow(t, ctx, f.Client, id, st.After))
	require.Len(t, ends, 1)
	require.False(t, ends[0].IsError, resultText(ends[0]))
	ex := executions(t, f.Client, id)
	require.Len(t, ex, 1)
	require.Equal(t, agentapi.HostQueue(f.Queue, "host-a"), ex[0].queue)
	require.True(t, pidIn(ex[0].worker, a), "host a ran the first tool: %s", ex[0].worker)
	return f, a, ctx
}

func pidIn(identity string, h *fleettest.Host) bool {
	return strings.HasPrefix(identity, fmt.Sprint(h.Pid())+"@")
}

// (a) A session's tools ran on host a; a is killed for good and never
// comes back. The session's next prompt, which runs a workspace tool, is
// answered within 2 minutes, its tool run by host b: the run-start check
// finds nobody polling a's queue, or (a dead host looks live for up to
// HostPollWindow after its last poll) the call waits out the session's
// hostStartTimeout (the default), the model sees "host-a is unavailable",
// calls again, and the run's host is now b. How long it took is logged,
// not asserted: the default's 90 s plus a few model turns, about 95 s idle.
func TestSessionOutlivesItsHost(t *testing.T) {
	t.Parallel()
	id := "session-a"
	f, a, _ := sessionOnHostA(t, id, 5*time.Minute)

	b := f.AddHost("host-b", nil)
	a.Kill()
	killed := time.Now()
	events := prompt(t, f, id, "Run: echo two", 4*time.Minute)
	took := time.Since(killed)
	ends := toolEnds(events)
	last := ends[len(ends)-1]
	require.False(t, last.IsError, resultText(last))
	require.Equal(t, "two", strings.TrimSpace(resultText(last)))
	ex := executions(t, f.Client, id)
	lastEx := ex[len(ex)-1]
	require.Equal(t, agentapi.HostQueue(f.Queue, "host-b"), lastEx.queue)
	require.True(t, pidIn(lastEx.worker, b), "host b ran the tool: %s", lastEx.worker)
	path := "the run-start check replaced host a"
	if len(ends) > 1 {
		path = "the call on host a waited out the default hostStartTimeout: " + resultText(ends[0])
	}
	t.Logf("host a killed; the next prompt was answered by host b %v later (%s)", took.Round(100*time.Millisecond), path)
	fmt.Printf("fleettest: session's next prompt answered %v after its host was killed for good (%s)\n", took.Round(100*time.Millisecond), path)
}

// (b) A pinned AgentLoop resolved on host a, whose tool call is scheduled
// on a's queue after a is gone (a dies while the model answers): the call
// ends with the "host ... is unavailable" error result after the run's
// hostStartTimeout, the model sees it and calls again, the call runs on
// host b (an unversioned host queue serving a pinned run's activity), and
// the run ends with stop. The deployment version holds the fleet's task
// queue alone, not the hosts' queues.
func TestToolCallOnAGoneHost(t *testing.T) {
	t.Parallel()
	m := newHostModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	a := f.AddHost("host-a", nil)
	f.WaitCurrent(time.Minute)
	cfg := config(f)
	cfg.HostStartTimeout = "5s"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run, err := agentclient.Start(ctx, f.Client, "loop-b", f.Queue, agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "[gate] Run: echo b-ran"})
	require.NoError(t, err)
	select {
	case <-m.waiting:
	case <-ctx.Done():
		t.Fatal("the model was never asked")
	}
	b := f.AddHost("host-b", nil)
	a.Kill()
	close(m.gate)

	var res agentapi.AgentLoopResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	var results []agent.Message
	for _, msg := range res.Messages {
		if msg.Role == agent.RoleToolResult {
			results = append(results, msg)
		}
	}
	require.Len(t, results, 2)
	require.True(t, results[0].IsError)
	require.Equal(t, "Tool bash did not run: host host-a is unavailable (no worker took the call within 5s)", agent.TextOf(results[0].Content))
	require.False(t, results[1].IsError, agent.TextOf(results[1].Content))
	require.Equal(t, "b-ran", strings.TrimSpace(agent.TextOf(results[1].Content)))
	require.Equal(t, []string{agent.TextOf(results[0].Content), agent.TextOf(results[1].Content)}, m.sawAll(), "the model saw both results")

	ex := executions(t, f.Client, run.GetID())
	require.Len(t, ex, 2)
	require.Equal(t, execution{queue: agentapi.HostQueue(f.Queue, "host-a")}, ex[0], "nobody took the call on host a")
	require.Equal(t, agentapi.HostQueue(f.Queue, "host-b"), ex[1].queue)
	require.True(t, pidIn(ex[1].worker, b), "host b ran the call again: %s", ex[1].worker)

	// The hosts' queues are not part of the deployment version the run is
	// pinned to: only the fleet's task queue is.
	h := f.Client.WorkerDeploymentClient().GetHandle(workflows.DeploymentName)
	desc, err := h.Describe(ctx, client.WorkerDeploymentDescribeOptions{})
	require.NoError(t, err)
	require.NotNil(t, desc.Info.RoutingConfig.CurrentVersion)
	version, err := h.DescribeVersion(ctx, client.WorkerDeploymentDescribeVersionOptions{BuildID: desc.Info.RoutingConfig.CurrentVersion.BuildID})
	require.NoError(t, err)
	queues := map[string]bool{}
	for _, q := range version.Info.TaskQueuesInfos {
		queues[q.Name] = true
	}
	require.Equal(t, map[string]bool{f.Queue: true}, queues, "the version's task queues")
}

// (c) A host that makes up its id keeps it across restarts (the same host
// queue, polled again), another host's is its own, and a given id
// ($AGENTLOOP_HOST_ID) names the queue.
func TestHostIDSurvivesRestarts(t *testing.T) {
	t.Parallel()
	m := newHostModel()
	f := fleettest.Start(t, fleettest.Options{Decide: m.decide})
	idOf := func(h *fleettest.Host) string {
		t.Helper()
		file := filepath.Join(f.Dir, "hosts", h.ID, "host-id")
		var b []byte
		require.Eventually(t, func() bool {
			var err error
			b, err = os.ReadFile(file)
			return err == nil && len(b) > 0
		}, time.Minute, 100*time.Millisecond, "host %s wrote no id", h.ID)
		return strings.TrimSpace(string(b))
	}
	one := f.NewHost("one", nil)
	require.NoError(t, one.Start())
	id1 := idOf(one)
	q1 := agentapi.HostQueue(f.Queue, id1)
	f.WaitPolled(q1, one, time.Minute)
	require.Equal(t, 1, startLines(one, q1))
	one.Stop(syscall.SIGTERM, 30*time.Second)
	require.NoError(t, one.Start())
	require.Equal(t, id1, idOf(one))
	f.WaitPolled(q1, one, time.Minute)
	require.Equal(t, 2, startLines(one, q1), "both starts logged the same host queue")

	two := f.NewHost("two", nil)
	require.NoError(t, two.Start())
	id2 := idOf(two)
	require.NotEqual(t, id1, id2)
	f.WaitPolled(agentapi.HostQueue(f.Queue, id2), two, time.Minute)

	env := append(f.Env(), "AGENTLOOP_HOST_ID=pod-3")
	three := f.NewHost("three", env)
	require.NoError(t, three.Start())
	f.WaitPolled(agentapi.HostQueue(f.Queue, "pod-3"), three, time.Minute)
	_, err := os.Stat(filepath.Join(f.Dir, "hosts", "three", "host-id"))
	require.True(t, errors.Is(err, os.ErrNotExist), "a given id is not written: %v", err)
}

// startLines counts the host's start-up log lines that name s.
func startLines(h *fleettest.Host, s string) int {
	n := 0
	for _, line := range strings.Split(h.Log(), "\n") {
		if strings.Contains(line, "worker starting") && strings.Contains(line, s) {
			n++
		}
	}
	return n
}

// The run-start check: a session's host a is killed for good; once the
// server has seen no poll on a's queue for HostPollWindow, the session's
// next prompt moves the session to host b before its first tool call, so
// no call waits on a's queue at all.
func TestRunStartMovesOffASilentHost(t *testing.T) {
	t.Parallel()
	id := "session-silent"
	f, a, ctx := sessionOnHostA(t, id, 6*time.Minute)
	queueA := agentapi.HostQueue(f.Queue, "host-a")

	b := f.AddHost("host-b", nil)
	a.Kill()
	killed := time.Now()
	// What the check asks the server: a's queue silent for the window.
	require.Eventually(t, func() bool {
		resp, err := f.Client.DescribeTaskQueue(ctx, queueA, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return false
		}
		for _, p := range resp.GetPollers() {
			if time.Since(p.GetLastAccessTime().AsTime()) < activities.HostPollWindow+5*time.Second {
				return false
			}
		}
		return true
	}, 4*time.Minute, time.Second, "the server still lists a recent poll on host a's queue")
	silent := time.Since(killed)
	start := time.Now()
	ends := toolEnds(prompt(t, f, id, "Run: echo two", 2*time.Minute))
	took := time.Since(start)
	require.Len(t, ends, 1, "no call waited on host a")
	require.False(t, ends[0].IsError, resultText(ends[0]))
	require.Equal(t, "two", strings.TrimSpace(resultText(ends[0])))
	ex := executions(t, f.Client, id)
	require.Len(t, ex, 2)
	require.Equal(t, agentapi.HostQueue(f.Queue, "host-b"), ex[1].queue)
	require.True(t, pidIn(ex[1].worker, b), "host b ran the tool: %s", ex[1].worker)
	t.Logf("host a's queue silent %v after the kill; the next prompt then took %v, on host b", silent.Round(time.Second), took.Round(100*time.Millisecond))
}
