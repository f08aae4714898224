package workflows_test

// Bad input through the real workflow on a real server: oversized starts,
// malformed input from the Temporal CLI, bad Updates and Signals, huge tool
// results and huge or malformed tool call arguments. Each must end in a
// clear error (or a capped result with a notice), lose nothing that was
// accepted, and never fail a workflow task.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// badPayloadLimit is Temporal's default blob size limit (limit.blobSize.error).
const badPayloadLimit = 2 << 20

// badHistory returns a run's history events.
func badHistory(t *testing.T, c client.Client, run client.WorkflowRun) []*historypb.HistoryEvent {
	t.Helper()
	h, err := testenv.History(context.Background(), c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	return h.Events
}

// badPayloadsSize is the size of a payload list as the server counts it.
func badPayloadsSize(p *commonpb.Payloads) int {
	n := 0
	for _, x := range p.GetPayloads() {
		n += len(x.GetData())
		for _, m := range x.GetMetadata() {
			n += len(m)
		}
	}
	return n
}

// badGuarded is a run whose first call waits for a person: the run stands
// still (no activity, no timer) while bad Updates and Signals arrive.
func badGuarded(t *testing.T, h *harness) client.WorkflowRun {
	t.Helper()
	in := h.input("go", "guarded")
	in.Approval = &agent.ApprovalPolicy{Tools: []string{"guarded"}}
	run := h.start(in)
	waitApprovals(h, run, 1)
	return run
}

// badGuardedHarness has the guarded tool, which counts its runs, and a script
// that calls it once then says done; c nil means the shared test server.
func badGuardedHarness(t *testing.T, c client.Client, ran *atomic.Int32) *harness {
	script := []llm.ScriptedResponse{answer(call("c1", "guarded")), answer(text("done"))}
	guarded := tool("guarded", func(context.Context, tools.Call) (agent.ToolResult, error) {
		ran.Add(1)
		return agent.TextResult("guarded ran"), nil
	})
	if c == nil {
		return newHarness(t, script, guarded)
	}
	return newHarnessOn(t, c, script, guarded)
}

func badRoles(res agentapi.AgentLoopResult) []string {
	var out []string
	for _, m := range res.Messages {
		out = append(out, m.Role+":"+agent.TextOf(m.Content))
	}
	return out
}

// A start whose input is over the payload limit is refused by the server and
// leaves no run behind; a 1 MiB prompt runs, and no payload the run records
// comes near the limit: the model turn's input holds the prompt's stub
// (the workflow stored it, workflows/inputs.go).
func TestBadInputOversizedWorkflowInput(t *testing.T) {
	h := newHarness(t, []llm.ScriptedResponse{answer(text("read it all"))})
	ctx := context.Background()

	t.Run("3 MB prompt", func(t *testing.T) {
		id := "test-" + testenv.Suffix()
		_, err := h.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: h.queue},
			agentapi.AgentLoopWorkflow, h.input(strings.Repeat("x", 3<<20)))
		require.Error(t, err, "a 3 MB start must be refused")
		t.Logf("refused: %v", err)
		require.Regexp(t, `(?i)size|limit|too large|exceeds`, err.Error(), "the refusal says why")
		_, err = h.c.DescribeWorkflow(ctx, id, "")
		var notFound *serviceerror.NotFound
		require.True(t, errors.As(err, &notFound), "no run exists after the refusal: %v", err)
	})

	t.Run("1 MiB prompt", func(t *testing.T) {
		prompt := strings.Repeat("y", 1<<20)
		run := h.start(h.input(prompt))
		res := h.result(run)
		require.Equal(t, agent.StopReasonStop, res.StopReason)
		require.Equal(t, "read it all", agent.TextOf(lastMessage(res).Content))
		h.mu.Lock()
		got := agent.TextOf(h.requests[0].Messages[len(h.requests[0].Messages)-1].Content)
		h.mu.Unlock()
		require.Equal(t, len(prompt), len(got), "the model saw the whole prompt")
		largest := 0
		for _, e := range badHistory(t, h.c, run) {
			if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
				n := badPayloadsSize(a.GetInput())
				require.Less(t, n, badPayloadLimit, "%s input", a.GetActivityType().GetName())
				if a.GetActivityType().GetName() == "ModelTurn" {
					largest = max(largest, n)
				}
			}
			if a := e.GetWorkflowExecutionCompletedEventAttributes(); a != nil {
				require.Less(t, badPayloadsSize(a.GetResult()), badPayloadLimit, "result")
			}
		}
		require.Less(t, largest, 64<<10, "the model turn's input holds the prompt's stub, not the prompt")
		t.Logf("ModelTurn input %d bytes; result omits %d messages", largest, res.OmittedMessages)
		requireNoFailedTasks(t, h.c, run)
	})
}

// badServer is a Temporal server whose address the CLI can use: the one at
// TEMPORAL_ADDRESS, else a dev server of this test's own (the shared one's
// address is not exported).
func badServer(t *testing.T) (string, client.Client) {
	t.Helper()
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		return addr, testenv.Client(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	return srv.FrontendHostPort(), srv.Client()
}

// badCLI runs the temporal CLI against addr and returns what it printed.
func badCLI(t *testing.T, cli, addr string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, append(args, "--address", addr, "--namespace", "default")...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Malformed input from the real temporal binary: the CLI refuses what is not
// JSON; JSON of the wrong shape or with unknown enumeration values fails the
// run at once with an error that says what is wrong, and no workflow task
// fails or retries. Bad Updates are refused, bad Signals dropped, and the
// run goes on.
func TestBadInputFromTheTemporalCLI(t *testing.T) {
	cli, err := devserver.FindCLI()
	if err != nil {
		t.Skip(err)
	}
	addr, c := badServer(t)
	var ran atomic.Int32
	h := badGuardedHarness(t, c, &ran)
	ctx := context.Background()
	model := `"model":{"provider":"test","id":"script"}`

	t.Run("start", func(t *testing.T) {
		cases := []struct {
			name, input string
			cliRefuses  bool   // the CLI itself refuses; no run exists
			want        string // in the run's failure
			invalid     bool   // an InvalidInput failure (non-retryable)
		}{
			{"not JSON at all", `hello, agent`, true, "", false},
			{"truncated JSON", `{` + model + `,"prompt":"hi"`, true, "", false},
			{"prompt is a number", `{` + model + `,"prompt":42}`, false, "prompt: got a JSON number, want a JSON string", true},
			{"model is a string", `{"model":"test/script","prompt":"hi"}`, false, "model: got a JSON string, want a JSON object", true},
			{"tools is a string", `{` + model + `,"prompt":"hi","tools":"ls"}`, false, "tools: got a JSON string, want a JSON array of strings", true},
			{"input is an array", `[1,2,3]`, false, "the input must be a JSON object, not a JSON array", true},
			{"input is a string", `"fix the bug"`, false, "the input must be a JSON object, not a JSON string", true},
			// Arguments that are not an object are kept, as pi keeps them
			// (agent.Content.RawArguments): the transcript is read, and
			// refused only for ending with the assistant.
			{"arguments not an object", `{` + model + `,"messages":[{"role":"assistant","content":[{"type":"toolCall","id":"x","name":"ls","arguments":[1,2]}]}]}`,
				false, "Cannot continue from message role: assistant", true},
			{"input is null", `null`, false, `model: want {"provider": "...", "id": "..."}`, true},
			{"unknown toolExecution", `{` + model + `,"prompt":"hi","toolExecution":"fast"}`, false, `toolExecution "fast": want parallel or sequential`, true},
			{"unknown steeringMode", `{` + model + `,"prompt":"hi","steeringMode":"sometimes"}`, false, `steeringMode "sometimes": want one-at-a-time or all`, true},
			{"unknown followUpMode", `{` + model + `,"prompt":"hi","followUpMode":"never"}`, false, `followUpMode "never": want one-at-a-time or all`, true},
			{"unknown role", `{` + model + `,"prompts":[{"role":"system","content":"hi"}]}`, false, `unknown message role "system"`, true},
			{"unknown block type", `{` + model + `,"prompts":[{"role":"user","content":[{"type":"audio"}]}]}`, false, `unknown content block type "audio"`, true},
			{"negative stopAfterTurn", `{` + model + `,"prompt":"hi","stopAfterTurn":{"turns":-1}}`, false, "stopAfterTurn.turns must not be negative", true},
			{"eventOrderWindow not a duration", `{` + model + `,"prompt":"hi","eventOrderWindow":"soon"}`, false, `eventOrderWindow "soon": want a positive Go duration up to 1m0s`, true},
			{"eventOrderWindow of a day", `{` + model + `,"prompt":"hi","eventOrderWindow":"24h"}`, false, `eventOrderWindow "24h": want a positive Go duration`, true},
			{"modelRetryTimeout not a duration", `{` + model + `,"prompt":"hi","modelRetryTimeout":"long"}`, false, `modelRetryTimeout "long": want a positive Go duration up to 168h0m0s`, true},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				id := "cli-" + testenv.Suffix()
				out, err := badCLI(t, cli, addr, "workflow", "start", "--type", agentapi.AgentLoopWorkflow,
					"--task-queue", h.queue, "--workflow-id", id, "--input", tc.input)
				if tc.cliRefuses {
					require.Error(t, err, "the CLI took %q:\n%s", tc.input, out)
					require.Contains(t, out, "not valid JSON")
					_, err := c.DescribeWorkflow(ctx, id, "")
					var notFound *serviceerror.NotFound
					require.True(t, errors.As(err, &notFound), "a run exists: %v", err)
					return
				}
				require.NoError(t, err, out)
				wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				run := c.GetWorkflow(wctx, id, "")
				err = run.Get(wctx, nil)
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.want)
				var appErr *temporal.ApplicationError
				require.True(t, errors.As(err, &appErr), "%T %v", err, err)
				if tc.invalid {
					require.Equal(t, agentapi.ErrInvalidInput, appErr.Type())
				}
				requireNoFailedTasks(t, c, run)
				events := badHistory(t, c, run)
				took := events[len(events)-1].GetEventTime().AsTime().Sub(events[0].GetEventTime().AsTime())
				require.Less(t, took, 10*time.Second, "the run failed at once")
				// Non-retryable: a run started with a retry policy must not
				// decode the same input again and again.
				require.True(t, appErr.NonRetryable(), "%v", appErr)
			})
		}
	})

	t.Run("updates and signals", func(t *testing.T) {
		run := badGuarded(t, h)
		id := run.GetID()
		before := len(badHistory(t, c, run))
		refused := []struct{ name, input, want string }{
			{agentapi.UpdateSteer, `{"content":""}`, "message is empty"},
			{agentapi.UpdateSteer, `{"role":"assistant","content":"hi"}`, `queued messages must have role user`},
			{agentapi.UpdateFollowUp, `{"content":[{"type":"video"}]}`, `unknown content block type`},
			{agentapi.UpdateFollowUp, `"just a string"`, "cannot unmarshal"},
			{agentapi.UpdateApprove, `{"toolCallId":"nope","decision":"allow"}`, `is not waiting for approval`},
			{agentapi.UpdateApprove, `{"toolCallId":"c1","decision":"perhaps"}`, "want allow, deny or always"},
		}
		for _, r := range refused {
			out, err := badCLI(t, cli, addr, "workflow", "update", "execute", "--workflow-id", id, "--name", r.name, "--input", r.input)
			require.Error(t, err, "%s %s was accepted:\n%s", r.name, r.input, out)
			require.Contains(t, out, r.want)
		}
		out, err := badCLI(t, cli, addr, "workflow", "update", "execute", "--workflow-id", id, "--name", agentapi.UpdateSteer, "--input", "not json")
		require.Error(t, err, out)
		require.Contains(t, out, "not valid JSON")
		require.Equal(t, before, len(badHistory(t, c, run)), "refused Updates left nothing in history")

		for _, s := range []struct{ name, input string }{
			{agentapi.SignalSteer, `"just a string"`},
			{agentapi.SignalSteer, `{"content":[{"type":"video"}]}`},
			{agentapi.SignalFollowUp, `{"role":"assistant","content":"x"}`},
			{agentapi.SignalFollowUp, `{"content":""}`},
			{agentapi.SignalApprove, `{"toolCallId":"nope","decision":"allow"}`},
			{agentapi.SignalApprove, `{"toolCallId":"c1","decision":"perhaps"}`},
			{agentapi.SignalApprove, `[1,2]`},
		} {
			out, err := badCLI(t, cli, addr, "workflow", "signal", "--workflow-id", id, "--name", s.name, "--input", s.input)
			require.NoError(t, err, out)
		}
		out, err = badCLI(t, cli, addr, "workflow", "signal", "--workflow-id", id, "--name", agentapi.SignalSteer, "--input", `{"content":"by signal"}`)
		require.NoError(t, err, out)
		st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.Steering) == 1 })
		require.Equal(t, "by signal", agent.TextOf(st.Steering[0].Content), "the bad signals were dropped")
		require.Len(t, st.PendingApprovals, 1, "no bad approve decided the call")
		require.Zero(t, ran.Load())

		out, err = badCLI(t, cli, addr, "workflow", "update", "execute", "--workflow-id", id, "--name", agentapi.UpdateApprove,
			"--input", `{"toolCallId":"c1","decision":"allow"}`)
		require.NoError(t, err, out)
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		var res agentapi.AgentLoopResult
		require.NoError(t, run.Get(wctx, &res))
		require.Equal(t, []string{"user:go", "assistant:", "toolResult:guarded ran", "user:by signal", "assistant:done"}, badRoles(res))
		requireNoFailedTasks(t, c, run)
	})
}

// badMessages are steering or follow-up payloads the validator refuses, with
// what the refusal says.
func badMessages() []struct {
	name string
	arg  any
	want string
} {
	return []struct {
		name string
		arg  any
		want string
	}{
		{"nil", nil, "message is empty"},
		{"empty object", map[string]any{}, "message is empty"},
		{"empty text", map[string]any{"content": ""}, "message is empty"},
		{"empty blocks", map[string]any{"content": []any{}}, "message is empty"},
		{"empty text block", map[string]any{"content": []any{map[string]any{"type": "text", "text": ""}}}, "message is empty"},
		{"content is a number", map[string]any{"content": 42}, "cannot unmarshal number"},
		{"blocks are numbers", map[string]any{"content": []any{1, 2}}, "cannot unmarshal number"},
		{"block without type", map[string]any{"content": []any{map[string]any{"text": "hi"}}}, "content block has no type"},
		{"unknown block type", map[string]any{"content": []any{map[string]any{"type": "video"}}}, `unknown content block type "video"`},
		{"image without data", map[string]any{"content": []any{map[string]any{"type": "image"}}}, "image block needs data and mimeType"},
		{"role assistant", map[string]any{"role": "assistant", "content": "hi"}, `role user, not "assistant"`},
		{"role toolResult", map[string]any{"role": "toolResult", "content": "hi"}, `role user, not "toolResult"`},
		{"a string", "just a string", "cannot unmarshal"},
		{"an array", []any{1, 2, 3}, "cannot unmarshal"},
		{"over MaxQueuedMessageBytes", agent.UserText(strings.Repeat("x", agentapi.MaxQueuedMessageBytes), 0), "the limit is"},
	}
}

// Bad steer, followUp and approve Updates are refused by the validators with
// the reason, leave nothing in history, and the run goes on. (A 3 MB
// message's refusal is refused by the server unless the worker trims it:
// workflows.TrimRejections.)
func TestBadInputUpdatesAreRefused(t *testing.T) {
	var ran atomic.Int32
	h := badGuardedHarness(t, nil, &ran)
	run := badGuarded(t, h)
	before := len(badHistory(t, h.c, run))
	t.Cleanup(func() {
		if t.Failed() {
			for _, e := range badHistory(t, h.c, run) {
				t.Logf("history %d %v %v", e.GetEventId(), e.GetEventType(), e.GetAttributes())
			}
		}
	})

	for _, name := range []string{agentapi.UpdateSteer, agentapi.UpdateFollowUp} {
		for _, m := range badMessages() {
			t.Run(name+"/"+m.name, func(t *testing.T) {
				_, err := update(t, h.c, run, name, m.arg)
				require.Error(t, err, "accepted")
				require.Contains(t, err.Error(), m.want)
			})
		}
		t.Run(name+"/3 MB, over the payload limit", func(t *testing.T) {
			_, err := update(t, h.c, run, name, agent.UserText(strings.Repeat("x", 3<<20), 0))
			require.Error(t, err, "accepted")
			require.Contains(t, err.Error(), "message is at least 3145728 bytes; the limit is 1048576")
		})
	}
	approves := []struct {
		name string
		arg  any
		want string
	}{
		{"unknown tool call id", agentapi.ApproveRequest{ToolCallID: "nope", Decision: "allow"}, `tool call "nope" is not waiting for approval; waiting: ["c1"]`},
		{"bad decision", agentapi.ApproveRequest{ToolCallID: "c1", Decision: "perhaps"}, `decision "perhaps": want allow, deny or always`},
		{"missing decision", map[string]any{"toolCallId": "c1"}, `decision "": want allow, deny or always`},
		{"missing tool call id", map[string]any{"decision": "allow"}, `tool call "" is not waiting for approval`},
		{"empty object", map[string]any{}, `decision "": want allow, deny or always`},
		{"nil", nil, `decision "": want allow, deny or always`},
		{"id is a number", map[string]any{"toolCallId": 5, "decision": "allow"}, "cannot unmarshal number"},
		{"a string", "allow", "cannot unmarshal"},
	}
	for _, a := range approves {
		t.Run("approve/"+a.name, func(t *testing.T) {
			_, err := update(t, h.c, run, agentapi.UpdateApprove, a.arg)
			require.Error(t, err, "accepted")
			require.Contains(t, err.Error(), a.want)
		})
	}
	t.Run("history", func(t *testing.T) {
		require.Equal(t, before, len(badHistory(t, h.c, run)), "refused Updates left nothing in history")
	})
	require.Zero(t, ran.Load(), "nothing decided the waiting call")

	st, err := update(t, h.c, run, agentapi.UpdateSteer, map[string]any{"content": "still here"})
	require.NoError(t, err)
	require.Equal(t, 1, st.Queued)
	_, err = update(t, h.c, run, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"})
	require.NoError(t, err)
	res := h.result(run)
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:guarded ran", "user:still here", "assistant:done"}, badRoles(res))
	requireNoFailedTasks(t, h.c, run)
}

// A deny reason becomes the tool result the model reads, so it is bounded
// like a queued message.
func TestBadInputOversizedApproveReason(t *testing.T) {
	var ran atomic.Int32
	h := badGuardedHarness(t, nil, &ran)
	run := badGuarded(t, h)
	before := len(badHistory(t, h.c, run))
	_, err := update(t, h.c, run, agentapi.UpdateApprove, agentapi.ApproveRequest{
		ToolCallID: "c1", Decision: "deny", Reason: strings.Repeat("no ", agentapi.MaxQueuedMessageBytes/3+1000)})
	if err == nil {
		// Accepted: the run must still end cleanly; the reason went to
		// the model as the tool result.
		res := h.result(run)
		requireNoFailedTasks(t, h.c, run)
		h.mu.Lock()
		last := h.requests[len(h.requests)-1].Messages
		h.mu.Unlock()
		t.Fatalf("(workflows/approval.go checkApproval): a %d-byte deny reason was accepted; it became a %d-byte tool result (the run's result omits %d messages to stay under the limit); want it refused like a queued message over MaxQueuedMessageBytes",
			len(strings.Repeat("no ", agentapi.MaxQueuedMessageBytes/3+1000)), len(agent.TextOf(last[len(last)-1].Content)), res.OmittedMessages)
	}
	require.Contains(t, err.Error(), "limit")
	require.Equal(t, before, len(badHistory(t, h.c, run)))
	_, err = update(t, h.c, run, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"})
	require.NoError(t, err)
	h.result(run)
	requireNoFailedTasks(t, h.c, run)
}

// The same payloads as Signals cannot be refused: each is recorded, dropped
// with a warning, and the run goes on without a failed task.
func TestBadInputSignalsAreDropped(t *testing.T) {
	var ran atomic.Int32
	h := badGuardedHarness(t, nil, &ran)
	run := badGuarded(t, h)
	ctx := context.Background()
	sent := 0
	signal := func(name string, arg any) {
		t.Helper()
		require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), name, arg))
		sent++
	}
	for _, name := range []string{agentapi.SignalSteer, agentapi.SignalFollowUp} {
		for _, m := range badMessages() {
			signal(name, m.arg)
		}
	}
	for _, a := range []any{
		agentapi.ApproveRequest{ToolCallID: "nope", Decision: "allow"},
		agentapi.ApproveRequest{ToolCallID: "c1", Decision: "perhaps"},
		map[string]any{"toolCallId": 5, "decision": "allow"},
		map[string]any{},
		nil,
		"allow",
	} {
		signal(agentapi.SignalApprove, a)
	}
	err := h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalSteer, agent.UserText(strings.Repeat("x", 3<<20), 0))
	require.Error(t, err, "a 3 MB signal must be refused by the server")
	t.Logf("3 MB signal refused: %v", err)
	signal(agentapi.SignalSteer, map[string]any{"content": "by signal"})

	st := h.waitState(run, func(s agentapi.RunState) bool { return len(s.Steering) > 0 })
	require.Len(t, st.Steering, 1)
	require.Equal(t, "by signal", agent.TextOf(st.Steering[0].Content))
	require.Empty(t, st.FollowUps)
	require.Len(t, st.PendingApprovals, 1, "no bad approve decided the call")
	signal(agentapi.SignalApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"})
	res := h.result(run)
	require.Equal(t, []string{"user:go", "assistant:", "toolResult:guarded ran", "user:by signal", "assistant:done"}, badRoles(res))
	signaled := 0
	for _, e := range badHistory(t, h.c, run) {
		if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED {
			signaled++
		}
	}
	require.Equal(t, sent, signaled, "every signal the server took is in history")
	requireNoFailedTasks(t, h.c, run)
}

// An abort Signal aborts whatever its payload: `temporal workflow signal
// --name abort` with no input, or with a bare reason string.
func TestBadInputAbortSignalPayloads(t *testing.T) {
	for _, tc := range []struct {
		name  string
		arg   any
		empty bool // no payload at all, as the CLI sends without --input
	}{
		{"no payload", nil, true},
		{"null", nil, false},
		{"a reason string", "stop now", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran atomic.Int32
			h := badGuardedHarness(t, nil, &ran)
			run := badGuarded(t, h)
			if tc.empty {
				_, err := h.c.WorkflowService().SignalWorkflowExecution(context.Background(), &workflowservice.SignalWorkflowExecutionRequest{
					Namespace:         "default",
					WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: run.GetID(), RunId: run.GetRunID()},
					SignalName:        agentapi.SignalAbort,
					Identity:          "badinput-test",
				})
				require.NoError(t, err)
			} else {
				require.NoError(t, h.c.SignalWorkflow(context.Background(), run.GetID(), run.GetRunID(), agentapi.SignalAbort, tc.arg))
			}
			ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
			defer cancel()
			var res agentapi.AgentLoopResult
			err := run.Get(ctx, &res)
			if badStillRunning(err) {
				st := h.waitState(run, func(agentapi.RunState) bool { return true })
				require.False(t, st.Aborted)
				_, _ = update(t, h.c, run, agentapi.UpdateAbort, map[string]any{})
				h.result(run)
				requireNoFailedTasks(t, h.c, run)
				t.Fatalf("(workflows/handlers.go addSignalCases): an abort signal with %s is dropped as undecodable and the run goes on; want it to abort (with the default reason)", tc.name)
			}
			require.NoError(t, err)
			require.Equal(t, agent.StopReasonAborted, res.StopReason)
			requireNoFailedTasks(t, h.c, run)
		})
	}
}

// Tools returning 10 MB of text, a 5 MB image, or 5 MB of details: the run
// completes, every result is capped with a notice, and no payload fails a
// task.
func TestBadInputHugeToolResults(t *testing.T) {
	bigText := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	bigImage := base64.StdEncoding.EncodeToString(make([]byte, 5<<20*3/4))
	h := newHarness(t, []llm.ScriptedResponse{
		answer(call("c1", "text"), call("c2", "image"), call("c3", "details")),
		answer(text("done")),
	},
		tool("text", func(context.Context, tools.Call) (agent.ToolResult, error) { return agent.TextResult(bigText), nil }),
		tool("image", func(context.Context, tools.Call) (agent.ToolResult, error) {
			return agent.ToolResult{Content: []agent.Content{agent.Text("an image"), agent.Image(bigImage, "image/png")}}, nil
		}),
		tool("details", func(context.Context, tools.Call) (agent.ToolResult, error) {
			d, _ := json.Marshal(map[string]string{"blob": bigText[:5<<20]})
			return agent.ToolResult{Content: []agent.Content{agent.Text("small text")}, Details: d}, nil
		}),
	)
	run := h.start(h.input("go", "text", "image", "details"))
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	results := badToolResults(t, h, run)
	require.Len(t, results, 3)
	for _, m := range results {
		b, _ := json.Marshal(m)
		require.Less(t, len(b), activities.MaxResultBytes+4096, "%s result is %d bytes", m.ToolName, len(b))
		t.Logf("%s: %d bytes of JSON", m.ToolName, len(b))
	}
	require.Contains(t, agent.TextOf(results[0].Content), "[Output truncated:")
	require.Equal(t, "an image", agent.TextOf(results[1].Content[:1]))
	require.Contains(t, agent.TextOf(results[1].Content), "[image block of")
	require.Equal(t, "small text", agent.TextOf(results[2].Content))
	badPayloadsUnderLimit(t, h, run)
	requireNoFailedTasks(t, h.c, run)
}

// A tool that fails with 10 MB of error text gives the model a capped error
// result, once.
func TestBadInputHugeToolError(t *testing.T) {
	bigText := strings.Repeat("0123456789abcdef\n", 10<<20/17)
	var runs atomic.Int32
	h := newHarness(t, []llm.ScriptedResponse{answer(call("c1", "fails")), answer(text("done"))},
		tool("fails", func(context.Context, tools.Call) (agent.ToolResult, error) {
			runs.Add(1)
			return agent.ToolResult{}, errors.New(bigText)
		}))
	run := h.start(h.input("go", "fails"))
	// Seconds when the error is capped; with it uncapped the run never
	// ends (the refused completion leaves the attempt to its timeout).
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); badStillRunning(err) {
		// Stuck: the activity's completion was refused by the server, and
		// the attempt waits for its heartbeat timeout to run the tool again.
		_ = h.c.TerminateWorkflow(context.Background(), run.GetID(), run.GetRunID(), "test: stuck on an oversized tool error")
		t.Fatalf("(activities/tools.go ExecuteToolCall): a tool error of %d bytes is returned uncapped (agent.ErrorResult(err.Error()) skips capResult); the activity's completion exceeds the payload limit, the run is stuck after %v and the tool would run again (ran %d times so far)",
			len(bigText), settleTimeout, runs.Load())
	}
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	results := badToolResults(t, h, run)
	require.Len(t, results, 1)
	require.True(t, results[0].IsError)
	b, _ := json.Marshal(results[0])
	require.Less(t, len(b), activities.MaxResultBytes+4096)
	require.EqualValues(t, 1, runs.Load(), "the failing tool ran once")
	requireNoFailedTasks(t, h.c, run)
}

// badStillRunning reports whether a bounded wait for a run's result ended
// with the run still going (the wait's deadline, not the run's failure).
func badStillRunning(err error) bool {
	var failed *temporal.WorkflowExecutionError
	return err != nil && !errors.As(err, &failed)
}

// badToolResults are the run's tool result messages, from the event log
// (the run's result may leave big ones out).
func badToolResults(t *testing.T, h *harness, run client.WorkflowRun) []agent.Message {
	t.Helper()
	var out []agent.Message
	for _, e := range h.events(run) {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
			out = append(out, *e.Message)
		}
	}
	return out
}

// badPayloadsUnderLimit checks every activity input and result in history.
func badPayloadsUnderLimit(t *testing.T, h *harness, run client.WorkflowRun) {
	t.Helper()
	for _, e := range badHistory(t, h.c, run) {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			require.Less(t, badPayloadsSize(a.GetInput()), badPayloadLimit)
		}
		if a := e.GetActivityTaskCompletedEventAttributes(); a != nil {
			require.Less(t, badPayloadsSize(a.GetResult()), badPayloadLimit)
		}
	}
}

// badNumTool needs a number n; it counts its executions.
func badNumTool(executed *atomic.Int32) tools.FuncTool {
	num := tool("num", func(context.Context, tools.Call) (agent.ToolResult, error) {
		executed.Add(1)
		return agent.TextResult("ran"), nil
	})
	num.Def.Parameters = json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`)
	return num
}

// Tool calls whose arguments are not what the schema asks (none at all,
// which is what providers make of arguments that are not an object; wrong
// types; huge strings) get pi's validation error as the result, the tool
// never runs, and the run goes on.
func TestBadInputMalformedToolCallArguments(t *testing.T) {
	var executed atomic.Int32
	huge := strings.Repeat("x", 600<<10)
	quotes := strings.Repeat(`"`, 300<<10) // JSON doubles each, twice over in an error's text
	h := newHarness(t, []llm.ScriptedResponse{
		answer(agent.ToolCall("c1", "num", nil), agent.ToolCall("c2", "num", map[string]any{"n": "many"}),
			agent.ToolCall("c3", "num", map[string]any{"n": []any{1, 2}}), agent.ToolCall("c4", "num", map[string]any{"n": map[string]any{"deep": true}})),
		answer(agent.ToolCall("c5", "num", map[string]any{"n": huge})),
		answer(agent.ToolCall("c6", "num", map[string]any{"n": 1, "junk": quotes})),
		answer(text("done")),
	}, badNumTool(&executed))
	run := h.start(h.input("go", "num"))
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, "done", agent.TextOf(lastMessage(res).Content))
	require.EqualValues(t, 1, executed.Load(), "only the valid call (c6, with an extra property) ran")
	results := badToolResults(t, h, run)
	require.Len(t, results, 6)
	var oversized []string
	for _, m := range results[:5] {
		require.True(t, m.IsError, m.ToolCallID)
		got := agent.TextOf(m.Content)
		require.Contains(t, got, `Validation failed for tool "num":`, m.ToolCallID)
		b, _ := json.Marshal(m)
		if len(b) > activities.MaxResultBytes+4096 {
			oversized = append(oversized, fmt.Sprintf("%s: %d bytes", m.ToolCallID, len(b)))
		}
		t.Logf("%s: %d bytes of JSON: %.100q", m.ToolCallID, len(b), got)
	}
	require.Contains(t, agent.TextOf(results[0].Content), "n: must have required properties n")
	require.Contains(t, agent.TextOf(results[1].Content), "n: must be number")
	require.Contains(t, agent.TextOf(results[4].Content), "n: must be number")
	require.Equal(t, "ran", agent.TextOf(results[5].Content))
	badPayloadsUnderLimit(t, h, run)
	requireNoFailedTasks(t, h.c, run)
	if len(oversized) > 0 {
		t.Fatalf("(activities/tools.go PrepareToolCall): validation errors repeat the received arguments and are returned uncapped (immediate() skips capResult), over activities.MaxResultBytes (%d): %v",
			activities.MaxResultBytes, oversized)
	}
}

// A tool call whose arguments alone are about 1 MiB of JSON: under the
// payload limit, so the turn must go through and validation answer it.
func TestBadInputToolCallArgumentsNearThePayloadLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		arg  string
	}{
		{"1 MiB of text", strings.Repeat("x", 1<<20)},
		{"600 KiB of quotes (1.2 MB of JSON)", strings.Repeat(`"`, 600<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var executed atomic.Int32
			h := newHarness(t, []llm.ScriptedResponse{
				answer(agent.ToolCall("c1", "num", map[string]any{"n": tc.arg})), answer(text("done")),
			}, badNumTool(&executed))
			run := h.start(h.input("go", "num"))
			res := h.result(run)
			requireNoFailedTasks(t, h.c, run)
			if res.StopReason == agent.StopReasonError && strings.Contains(res.ErrorMessage, "Heartbeat details exceed size limit") {
				t.Fatalf("(activities/stream.go liveStream): a model turn whose output is %d bytes of JSON fails with %q: the live-stream heartbeat carries the whole partial message and the recent events (which repeat it), about twice the message, so output well under the 2 MB payload limit fails the turn non-retryably",
					len(tc.arg), res.ErrorMessage)
			}
			require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
			results := badToolResults(t, h, run)
			require.Len(t, results, 1)
			require.Contains(t, agent.TextOf(results[0].Content), "n: must be number")
			require.Zero(t, executed.Load())
			badPayloadsUnderLimit(t, h, run)
		})
	}
}

// A 3 MB steering message that reaches the worker in a normal workflow task
// (here beside a Signal sent while no worker polled) is refused with the
// validator's reason, and the run goes on. Without workflows.TrimRejections
// the refusal carries the 3 MB request back, and the server terminates the
// run ("Message type temporal.api.update.v1.Rejection exceeds size limit").
func TestOversizedUpdateInANormalWorkflowTask(t *testing.T) {
	var ran atomic.Int32
	h := badGuardedHarness(t, nil, &ran)
	run := badGuarded(t, h)
	ctx := context.Background()

	h.stopWorker()
	require.NoError(t, h.c.SignalWorkflow(ctx, run.GetID(), run.GetRunID(), agentapi.SignalSteer, map[string]any{"content": "by signal"}))
	refused := make(chan error, 1)
	go func() {
		_, err := update(t, h.c, run, agentapi.UpdateSteer, agent.UserText(strings.Repeat("x", 3<<20), 0))
		refused <- err
	}()
	h.startWorker()
	select {
	case err := <-refused:
		require.Error(t, err, "accepted")
		require.Contains(t, err.Error(), "message is at least 3145728 bytes; the limit is 1048576")
	case <-time.After(time.Minute):
		t.Fatal("the Update got no answer")
	}

	// The run waits for its approval still, with the Signal's message queued.
	h.waitState(run, func(s agentapi.RunState) bool { return len(s.PendingApprovals) == 1 && len(s.Steering) == 1 })
	_, err := update(t, h.c, run, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: "c1", Decision: "allow"})
	require.NoError(t, err)
	res := h.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
	require.Equal(t, int32(1), ran.Load())
}
