package workflows_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// remoteTool declares a remote tool named name served as activityType on
// queue.
func remoteTool(name, queue, activityType string, replay agent.RemoteReplay) agent.RemoteTool {
	return agent.RemoteTool{Name: name, Description: "remote tool " + name, TaskQueue: queue, ActivityType: activityType,
		Replay: replay, Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`)}
}

// A remote tool's arguments arrive validated and coerced, its large output
// is stored (history keeps a stub), and its result is the call's, as a
// built-in tool's would be.
func TestRemoteToolRunsOnItsOwnQueue(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "fetch", map[string]any{"n": "7"})),
		answer(text("done")),
	})
	queue := "remote-" + testenv.Suffix()
	big := incompressible(7, 20_000)
	var mu sync.Mutex
	var got agentapi.RemoteToolInput
	w := worker.New(h.c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(ctx context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
		mu.Lock()
		got = in
		mu.Unlock()
		return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text(big)}, Details: json.RawMessage(`{"rows":2000}`)}, nil
	}, activity.RegisterOptions{Name: "FetchRows"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	in := h.input("go")
	in.RemoteTools = []agent.RemoteTool{remoteTool("fetch", queue, "FetchRows", agent.ReplayNever)}
	run := h.start(in)
	res := h.result(run)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, "c1", got.ToolCallID)
	require.Equal(t, "fetch", got.ToolName)
	require.Equal(t, map[string]any{"n": float64(7)}, got.Args, "coerced by the loop's validation")
	require.Equal(t, 1, got.Position)
	require.Equal(t, run.GetID(), got.WorkflowID)
	require.Equal(t, run.GetRunID(), got.RunID)
	result := res.Messages[2]
	require.Equal(t, agent.RoleToolResult, result.Role)
	require.False(t, result.IsError)
	require.Equal(t, big, result.Content[0].Text)
	require.JSONEq(t, `{"rows":2000}`, string(result.Details))

	// The model was offered the remote tool with its schema.
	h.mu.Lock()
	offered := h.requests[0].Tools
	h.mu.Unlock()
	require.Len(t, offered, 1)
	require.Equal(t, "fetch", offered[0].Name)
	require.JSONEq(t, string(in.RemoteTools[0].Parameters), string(offered[0].Parameters))

	// After the activity's own completion, history holds the output as a
	// stub: neither the next model turn's input nor the run's result
	// repeats it (about 28 KB here; 3 copies take over 60 KB).
	desc, err := h.c.DescribeWorkflow(context.Background(), run.GetID(), run.GetRunID())
	require.NoError(t, err)
	size := desc.RawResponse.GetWorkflowExecutionInfo().GetHistorySizeBytes()
	t.Logf("history: %d bytes for a %d-byte output", size, len(big))
	require.Less(t, size, int64(2*len(big)), "the output is in history once")
}

// Bad declarations fail the run at its start, each saying what is wrong.
func TestRemoteToolBadDeclarations(t *testing.T) {
	h := newHarness(t, nil, tool("mine", func(context.Context, tools.Call) (agent.ToolResult, error) {
		return agent.TextResult("x"), nil
	}))
	ok := remoteTool("fetch", "q", "Fetch", agent.ReplaySafe)
	for _, tc := range []struct {
		name string
		in   any
		want []string
	}{
		{"missing fields", func() agentapi.AgentLoopInput {
			in := h.input("go", "mine")
			in.RemoteTools = []agent.RemoteTool{{Name: "x"}}
			return in
		}(), []string{"remoteTools[0]: taskQueue is missing", "remoteTools[0]: activityType is missing", "remoteTools[0]: replay is missing"}},
		{"bad values", func() agentapi.AgentLoopInput {
			in := h.input("go")
			bad := ok
			bad.Replay, bad.ExecutionMode, bad.HeartbeatTimeout = "twice", "later", "soon"
			bad.Parameters = json.RawMessage(`{"type":"string"}`)
			in.RemoteTools = []agent.RemoteTool{bad}
			return in
		}(), []string{`replay "twice": want never or safe`, `executionMode "later"`, `heartbeatTimeout "soon"`, "a tool takes an object"}},
		{"a built-in's name", func() agentapi.AgentLoopInput {
			in := h.input("go")
			clash := ok
			clash.Name = "read"
			in.RemoteTools = []agent.RemoteTool{clash}
			return in
		}(), []string{`name "read" is a built-in tool's`}},
		{"twice, and in tools", func() agentapi.AgentLoopInput {
			in := h.input("go", "fetch")
			in.RemoteTools = []agent.RemoteTool{ok, ok}
			return in
		}(), []string{`name "fetch" is declared twice`, `name "fetch" is also in tools`}},
		{"a tool of the worker", func() agentapi.AgentLoopInput {
			in := h.input("go")
			clash := ok
			clash.Name = "mine"
			in.RemoteTools = []agent.RemoteTool{clash}
			return in
		}(), []string{`remoteTools: "mine" is a tool of this worker's registry`}},
		{"an unknown field", map[string]any{
			"model": map[string]any{"provider": "test", "id": "script"}, "prompt": "go",
			"remoteTools": []any{map[string]any{"name": "fetch", "taskQeue": "q", "activityType": "Fetch", "replay": "never"}},
		}, []string{`unknown field "taskQeue"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := h.start(tc.in)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := run.Get(ctx, nil)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "%v", err)
			require.Equal(t, agentapi.ErrInvalidInput, appErr.Type())
			for _, w := range tc.want {
				require.Contains(t, appErr.Message(), w)
			}
		})
	}
}

// A session's remote tools are set for its next run; a bad set is refused.
func TestSessionSetsRemoteTools(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "fetch", map[string]any{})),
		answer(text("done")),
	})
	queue := "remote-" + testenv.Suffix()
	w := worker.New(h.c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(ctx context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
		return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text("fetched")}}, nil
	}, activity.RegisterOptions{Name: "Fetch"})
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	id := "session-" + testenv.Suffix()
	_, err := h.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: h.queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "test", ID: "script"}}})
	require.NoError(t, err)
	update := func(name string, arg any) error {
		hd, err := h.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name,
			Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted})
		if err != nil {
			return err
		}
		return hd.Get(ctx, nil)
	}
	err = update(agentapi.UpdateSetRemoteTools, map[string]any{"remoteTools": []any{map[string]any{"name": "read"}}})
	require.ErrorContains(t, err, `name "read" is a built-in tool's`)
	err = update(agentapi.UpdateSetRemoteTools, map[string]any{"tools": []any{}})
	require.ErrorContains(t, err, `unknown field "tools"`)
	tools := []agent.RemoteTool{remoteTool("fetch", queue, "Fetch", agent.ReplayNever)}
	require.NoError(t, update(agentapi.UpdateSetRemoteTools, agentapi.RemoteToolsRequest{RemoteTools: &tools}))
	require.NoError(t, update(agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "go"}))
	require.Eventually(t, func() bool {
		resp, err := h.c.QueryWorkflow(ctx, id, "", agentapi.QueryState)
		var st agentapi.RunState
		return err == nil && resp.Get(&st) == nil && st.Status == agentapi.StatusIdle && st.Messages == 4
	}, settleTimeout, 50*time.Millisecond)
	resp, err := h.c.QueryWorkflow(ctx, id, "", agentapi.QueryContext, agentapi.ContextQuery{})
	require.NoError(t, err)
	var page agentapi.ContextPage
	require.NoError(t, resp.Get(&page))
	require.Equal(t, "fetched", page.Messages[2].Content[0].Text)
	require.NoError(t, h.c.CancelWorkflow(ctx, id, ""))
}

// The remote tool's worker is a process of its own (this test binary,
// TestRemoteToolHelperWorker) that the tests kill mid-call.
const remoteWorkerEnv = "AGENTLOOP_TEST_REMOTE_WORKER"

// TestRemoteToolHelperWorker is not a test: it is the remote tool worker
// process of the lost-worker tests. Its activity Hang notes each attempt
// in a file, then hangs (heartbeating) on attempt 1 and answers on later
// ones.
func TestRemoteToolHelperWorker(t *testing.T) {
	spec := os.Getenv(remoteWorkerEnv)
	if spec == "" {
		t.Skip("the remote tool worker process of TestRemoteToolLostWorker")
	}
	parts := strings.Split(spec, "|")
	require.Len(t, parts, 3, "address|queue|notes file")
	addr, queue, notes := parts[0], parts[1], parts[2]
	c, err := client.Dial(client.Options{HostPort: addr, Logger: testenv.Quiet()})
	require.NoError(t, err)
	w := worker.New(c, queue, worker.Options{})
	w.RegisterActivityWithOptions(func(ctx context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
		attempt := activity.GetInfo(ctx).Attempt
		f, err := os.OpenFile(notes, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return agentapi.RemoteToolResult{}, err
		}
		_, _ = fmt.Fprintf(f, "attempt %d pid %d\n", attempt, os.Getpid())
		_ = f.Close()
		if attempt > 1 {
			return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text(fmt.Sprintf("done on attempt %d", attempt))}}, nil
		}
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-ctx.Done():
				return agentapi.RemoteToolResult{}, ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}, activity.RegisterOptions{Name: "Hang"})
	require.NoError(t, w.Run(worker.InterruptCh()))
}

// startRemoteWorker starts the remote tool worker process on queue; it is
// killed when the test ends, if it still runs.
func startRemoteWorker(t *testing.T, queue, notes string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestRemoteToolHelperWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), remoteWorkerEnv+"="+testenv.HostPort()+"|"+queue+"|"+notes)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// attempts reads the notes of the remote worker processes: one line per
// attempt that started.
func attempts(t *testing.T, notes string) []string {
	b, err := os.ReadFile(notes)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// A remote tool whose worker is lost mid-call (the process killed): with
// replay class never the call ends with pi's "No result provided" and is
// not run again, though another worker polls the queue; with safe it runs
// again on that other worker.
func TestRemoteToolLostWorker(t *testing.T) {
	for _, replay := range []agent.RemoteReplay{agent.ReplayNever, agent.ReplaySafe} {
		t.Run(string(replay), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, []llm.ScriptedResponse{
				answer(agent.ToolCall("c1", "hang", map[string]any{})),
				answer(text("done")),
			})
			queue := "remote-" + testenv.Suffix()
			notes := filepath.Join(t.TempDir(), "attempts")
			first := startRemoteWorker(t, queue, notes)
			in := h.input("go")
			rt := remoteTool("hang", queue, "Hang", replay)
			rt.HeartbeatTimeout = "3s"
			in.RemoteTools = []agent.RemoteTool{rt}
			run := h.start(in)
			require.Eventually(t, func() bool { return len(attempts(t, notes)) == 1 }, settleTimeout, 50*time.Millisecond)
			require.NoError(t, first.Process.Kill())
			_ = first.Wait()
			startRemoteWorker(t, queue, notes)

			res := h.result(run)
			result := res.Messages[2]
			require.Equal(t, agent.RoleToolResult, result.Role)
			got := attempts(t, notes)
			if replay == agent.ReplayNever {
				require.True(t, result.IsError)
				require.Equal(t, "No result provided", result.Content[0].Text)
				require.Contains(t, string(result.Details), "heartbeat timeout")
				require.Contains(t, string(result.Details), "it was not run again")
				require.Len(t, got, 1, "never ran twice: %v", got)
				return
			}
			require.False(t, result.IsError, "%v", result.Content)
			require.Equal(t, "done on attempt 2", result.Content[0].Text)
			require.Len(t, got, 2, "%v", got)
			require.NotEqual(t, strings.SplitN(got[0], "_", 4)[3], strings.SplitN(got[1], "_", 4)[3], "on another worker")
		})
	}
}

// An abort reaches a remote tool that heartbeats as a cancellation. With
// replay class never the call ends with an error result saying so; with
// safe it runs again with aborted set, as pi runs a tool after an abort,
// and the tool decides. The run ends aborted either way.
func TestRemoteToolAborted(t *testing.T) {
	for _, replay := range []agent.RemoteReplay{agent.ReplayNever, agent.ReplaySafe} {
		t.Run(string(replay), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, []llm.ScriptedResponse{
				answer(agent.ToolCall("c1", "wait", map[string]any{})),
				answer(text("not reached")),
			})
			queue := "remote-" + testenv.Suffix()
			started := make(chan struct{}, 4)
			var mu sync.Mutex
			var inputs []agentapi.RemoteToolInput
			w := worker.New(h.c, queue, worker.Options{MaxHeartbeatThrottleInterval: 50 * time.Millisecond})
			w.RegisterActivityWithOptions(func(ctx context.Context, in agentapi.RemoteToolInput) (agentapi.RemoteToolResult, error) {
				mu.Lock()
				inputs = append(inputs, in)
				mu.Unlock()
				if in.Aborted {
					return agentapi.RemoteToolResult{Content: []agent.Content{agent.Text("stopped: the run was aborted")}, IsError: true}, nil
				}
				started <- struct{}{}
				for {
					activity.RecordHeartbeat(ctx)
					select {
					case <-ctx.Done():
						return agentapi.RemoteToolResult{}, ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
				}
			}, activity.RegisterOptions{Name: "Wait"})
			require.NoError(t, w.Start())
			t.Cleanup(w.Stop)

			in := h.input("go")
			rt := remoteTool("wait", queue, "Wait", replay)
			rt.HeartbeatTimeout = "10s"
			in.RemoteTools = []agent.RemoteTool{rt}
			run := h.start(in)
			select {
			case <-started:
			case <-time.After(settleTimeout):
				t.Fatal("the remote tool did not start")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			hd, err := h.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: run.GetID(), RunID: run.GetRunID(),
				UpdateName: agentapi.UpdateAbort, Args: []any{agentapi.AbortRequest{Reason: "stop"}},
				WaitForStage: client.WorkflowUpdateStageCompleted})
			require.NoError(t, err)
			require.NoError(t, hd.Get(ctx, nil))

			res := h.result(run)
			mu.Lock()
			defer mu.Unlock()
			require.Equal(t, agent.StopReasonAborted, lastMessage(res).StopReason)
			result := res.Messages[2]
			require.True(t, result.IsError)
			if replay == agent.ReplayNever {
				require.Equal(t, "Tool wait was cancelled by the run's abort; its replay class is never, so it was not run again",
					result.Content[0].Text)
				require.Len(t, inputs, 1)
				return
			}
			require.Equal(t, "stopped: the run was aborted", result.Content[0].Text)
			require.Len(t, inputs, 2)
			require.True(t, inputs[1].Aborted)
		})
	}
}
