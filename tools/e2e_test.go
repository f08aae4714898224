package tools_test

// End-to-end tests of the seven coding tools inside the AgentLoop workflow,
// on a real Temporal server: a scripted model drives real tools on real
// files, and the tests check the files, the results, the events and the
// run's history.

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

func TestMain(m *testing.M) { testenv.MainCheckingLeaks(m) }

var allTools = []string{"read", "bash", "edit", "write", "ls", "grep", "find"}

// e2e is a worker on a task queue of its own running the workflow with a
// scripted model and the given tools.
type e2e struct {
	t     *testing.T
	c     client.Client
	queue string
	acts  *activities.Activities
}

func newE2E(t *testing.T, script []llm.ScriptedResponse, ts []tools.Tool) *e2e {
	t.Helper()
	c := testenv.Client(t)
	e := &e2e{t: t, c: c, queue: "tools-e2e-" + testenv.Suffix()}
	e.acts = agentworker.NewActivities(agentworker.Options{Client: c, Store: testenv.Store(t), Models: scriptedModels(script), Tools: tools.NewRegistry(ts...)})
	e.startWorker(e.queue, e.acts, true, "")
	return e
}

// startWorker runs a worker on queue: the workflow and all activities when
// withWorkflow, else only the activities (a tool worker).
func (e *e2e) startWorker(queue string, acts *activities.Activities, withWorkflow bool, identity string) {
	opts := workflows.WorkerOptions()
	opts.MaxHeartbeatThrottleInterval = 50 * time.Millisecond // aborts reach tools fast
	acts.HeartbeatInterval = opts.MaxHeartbeatThrottleInterval
	opts.Identity = identity
	w, err := agentworker.New(agentworker.Options{Client: e.c, TaskQueue: queue, WorkerOptions: &opts, Activities: acts, ActivitiesOnly: !withWorkflow})
	require.NoError(e.t, err)
	require.NoError(e.t, w.Start())
	e.t.Cleanup(w.Stop)
}

func scriptedModels(script []llm.ScriptedResponse) *llm.Registry {
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{Responses: script})
	models := llm.NewRegistry()
	models.Register("test", scripted)
	return models
}

func input(workspace string, toolNames ...string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: "test", ID: "script"},
			Tools:     toolNames,
			Workspace: workspace,
		},
		Prompt: "The test in this project fails. Please fix it.",
	}
}

func (e *e2e) start(in agentapi.AgentLoopInput) client.WorkflowRun {
	e.t.Helper()
	return testenv.Start(e.t, e.c, e.queue, "tools-e2e-", in)
}

func (e *e2e) result(run client.WorkflowRun) agentapi.AgentLoopResult {
	e.t.Helper()
	return testenv.Result(e.t, run, time.Minute)
}

func (e *e2e) events(run client.WorkflowRun) []agent.Event {
	e.t.Helper()
	return testenv.Events(e.t, e.c, run)
}

func (e *e2e) history(run client.WorkflowRun) *historypb.History {
	e.t.Helper()
	h, err := testenv.History(context.Background(), e.c, run.GetID(), run.GetRunID())
	require.NoError(e.t, err)
	for _, ev := range h.Events {
		require.NotEqual(e.t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, ev.GetEventType(), "workflow task failed: %v", ev)
	}
	return h
}

func (e *e2e) abort(run client.WorkflowRun, reason string) {
	e.t.Helper()
	h, err := e.c.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), RunID: run.GetRunID(), UpdateName: agentapi.UpdateAbort,
		Args: []any{agentapi.AbortRequest{Reason: reason}}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	require.NoError(e.t, err)
	var st agentapi.AbortStatus
	require.NoError(e.t, h.Get(context.Background(), &st))
	require.False(e.t, st.AlreadyAborted)
}

// --- the whole toolbox in one conversation ---------------------------------

const (
	greetSh = "greet() {\n\techo \"Hello, $1\" # TODO: punctuation\n}\n"
	mainSh  = ". ./src/greet.sh\ngreet world\n"
	utilSh  = "twice() {\n\techo $(($1 * 2))\n}\n\nthrice() {\n\techo $(($1 * 3))\n}\n"
	testSh  = "#!/bin/sh\nout=$(sh src/main.sh)\nif [ \"$out\" != \"Hello, world!\" ]; then\n\techo \"FAIL: got '$out', want 'Hello, world!'\"\n\texit 1\nfi\necho PASS\n"
	readme  = "# greeter\n\nSays hello. TODO: a man page.\n"
	outside = "outside the workspace\n"
)

// project writes a small shell project into parent/project and a file next
// to it (outside the workspace), and returns the workspace.
func project(t *testing.T) (ws string) {
	t.Helper()
	parent := t.TempDir()
	ws = filepath.Join(parent, "project")
	var big strings.Builder
	for i := 1; i <= 3000; i++ {
		big.WriteString("entry " + strconv.Itoa(i) + "\n")
	}
	files := map[string]string{
		"README.md":          readme,
		"src/greet.sh":       greetSh,
		"src/main.sh":        mainSh,
		"src/util.sh":        utilSh,
		"test.sh":            testSh,
		"logs/big.log":       big.String(),
		".gitignore":         "build/\n",
		"build/generated.sh": "# TODO: generated, ignored\n",
		"../outside.txt":     outside,
	}
	for p, content := range files {
		full := filepath.Join(ws, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
	}
	return ws
}

func call(id, name string, args map[string]any) agent.Content { return agent.ToolCall(id, name, args) }

func answer(blocks ...agent.Content) llm.ScriptedResponse {
	return llm.ScriptedResponse{Content: blocks}
}

func TestE2EAllSevenToolsInOneConversation(t *testing.T) {
	ws := project(t)
	bashOut := t.TempDir()
	script := []llm.ScriptedResponse{
		// Look around: ls, find and two greps in one parallel batch.
		answer(agent.Text("Let me look at the project."),
			call("ls1", "ls", map[string]any{"path": "."}),
			call("find1", "find", map[string]any{"pattern": "*.sh"}),
			call("grep1", "grep", map[string]any{"pattern": "TODO", "limit": 1}),
			call("grep2", "grep", map[string]any{"pattern": "echo", "path": "src", "glob": "*.sh"})),
		// A parallel batch of reads, one truncated, one with offset and limit.
		answer(call("r1", "read", map[string]any{"path": "src/greet.sh"}),
			call("r2", "read", map[string]any{"path": "src/main.sh"}),
			call("r3", "read", map[string]any{"path": "test.sh"}),
			call("r4", "read", map[string]any{"path": "logs/big.log"}),
			call("r5", "read", map[string]any{"path": "src/util.sh", "offset": 5, "limit": 1})),
		// Run the failing test; an ambiguous edit fails.
		answer(call("b1", "bash", map[string]any{"command": "sh test.sh"}),
			call("e1", "edit", map[string]any{"path": "src/util.sh", "edits": []any{
				map[string]any{"oldText": "\techo $(($1 *", "newText": "\tprintf '%d\\n' $(($1 *"},
			}})),
		// Fix it, and write a changelog in a new directory.
		answer(call("e2", "edit", map[string]any{"path": "src/greet.sh",
			"oldText": "echo \"Hello, $1\"", "newText": "echo \"Hello, $1!\""}),
			call("w1", "write", map[string]any{"path": "docs/CHANGELOG.md", "content": "- greet ends with an exclamation mark\n"})),
		// Run the test again (slowly, to see partial output), and a long command.
		answer(call("b2", "bash", map[string]any{"command": "echo running tests; sleep 0.6; sh test.sh"}),
			call("b3", "bash", map[string]any{"command": "seq 1 3000"})),
		// Paths outside the workspace are refused.
		answer(call("x1", "write", map[string]any{"path": "../escaped.txt", "content": "escaped"}),
			call("x2", "edit", map[string]any{"path": "../outside.txt", "edits": []any{map[string]any{"oldText": "outside", "newText": "inside"}}}),
			call("x3", "read", map[string]any{"path": "../outside.txt"}),
			call("x4", "ls", map[string]any{"path": ".."})),
		answer(agent.Text("Fixed: greet now ends with an exclamation mark and the test passes.")),
	}
	e := newE2E(t, script, tools.Builtins(tools.BuiltinOptions{BashOutputDir: bashOut}))
	outsideInfo, err := os.Stat(filepath.Join(ws, "../outside.txt"))
	require.NoError(t, err)

	start := time.Now()
	run := e.start(input(ws, allTools...))
	res := e.result(run)
	t.Logf("run took %v", time.Since(start))
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, 7, res.Turns)

	results := map[string]agent.Message{}
	var order []string
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			results[m.ToolCallID] = m
			order = append(order, m.ToolCallID)
		}
	}
	require.Equal(t, []string{"ls1", "find1", "grep1", "grep2", "r1", "r2", "r3", "r4", "r5", "b1", "e1", "e2", "w1",
		"b2", "b3", "x1", "x2", "x3", "x4"}, order, "result messages in call order")
	textOf := func(id string) string { return agent.TextOf(results[id].Content) }
	ok := func(id string) string {
		t.Helper()
		require.False(t, results[id].IsError, "%s: %s", id, textOf(id))
		return textOf(id)
	}
	failed := func(id string) string {
		t.Helper()
		require.True(t, results[id].IsError, "%s should have failed: %s", id, textOf(id))
		return textOf(id)
	}

	// Turn 1: ls, find, grep.
	require.Equal(t, ".gitignore\nbuild/\nlogs/\nREADME.md\nsrc/\ntest.sh", ok("ls1"), "sorted case-insensitively")
	require.Equal(t, "src/greet.sh\nsrc/main.sh\nsrc/util.sh\ntest.sh", ok("find1"), "find honours .gitignore")
	require.Equal(t, "README.md:3: Says hello. TODO: a man page.\n\n[1 matches limit reached. Use limit=2 for more, or refine pattern]", ok("grep1"))
	require.Equal(t, "greet.sh:2: \techo \"Hello, $1\" # TODO: punctuation\nutil.sh:2: \techo $(($1 * 2))\nutil.sh:6: \techo $(($1 * 3))", ok("grep2"))

	// Turn 2: the reads.
	require.Equal(t, greetSh, ok("r1"))
	require.Equal(t, mainSh, ok("r2"))
	require.Equal(t, testSh, ok("r3"))
	big := ok("r4")
	require.True(t, strings.HasPrefix(big, "entry 1\nentry 2\n"))
	require.True(t, strings.HasSuffix(big, "entry 2000\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]"), "%s", big[len(big)-120:])
	require.Equal(t, "thrice() {\n\n[3 more lines in file. Use offset=6 to continue.]", ok("r5"))

	// Turn 3: the failing test and the ambiguous edit.
	require.Equal(t, "FAIL: got 'Hello, world', want 'Hello, world!'\n\n\nCommand exited with code 1", failed("b1"))
	require.Equal(t, "Found 2 occurrences of the text in src/util.sh. The text must be unique. Please provide more context to make it unique.", failed("e1"))
	require.JSONEq(t, "{}", string(results["e1"].Details))

	// Turn 4: the fix, with its diff, and the new file.
	require.Equal(t, "Successfully replaced 1 block(s) in src/greet.sh.", ok("e2"))
	var diff tools.EditDetails
	require.NoError(t, json.Unmarshal(results["e2"].Details, &diff))
	require.Equal(t, 2, diff.FirstChangedLine)
	require.Contains(t, diff.Diff, "-2 \techo \"Hello, $1\" # TODO: punctuation")
	require.Contains(t, diff.Diff, "+2 \techo \"Hello, $1!\" # TODO: punctuation")
	require.Equal(t, "Successfully wrote 38 bytes to docs/CHANGELOG.md", ok("w1"))

	// Turn 5: the passing test, and a long output cut to its tail.
	require.Equal(t, "running tests\nPASS\n", ok("b2"))
	long := ok("b3")
	var bashDetails struct {
		Truncation     tools.Truncation `json:"truncation"`
		FullOutputPath string           `json:"fullOutputPath"`
	}
	require.NoError(t, json.Unmarshal(results["b3"].Details, &bashDetails))
	require.True(t, bashDetails.Truncation.Truncated)
	require.Equal(t, bashOut, filepath.Dir(filepath.Dir(bashDetails.FullOutputPath)), "in the run's own directory")
	require.True(t, strings.HasSuffix(long, "\n3000\n\n\n[Showing lines 1002-3001 of 3001. Full output: "+bashDetails.FullOutputPath+"]"), "%s", long[len(long)-150:])
	full, err := os.ReadFile(bashDetails.FullOutputPath)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(full), "1\n2\n3\n") && strings.HasSuffix(string(full), "\n2999\n3000\n"))

	// Turn 6: every escape is refused.
	for _, id := range []string{"x1", "x2", "x3", "x4"} {
		require.Contains(t, failed(id), " is outside the workspace ", id)
	}
	require.Regexp(t, `^Path \.\./escaped\.txt is outside the workspace .*project\. Use a path inside the workspace\.$`, textOf("x1"))

	// The files afterwards.
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(ws, p))
		require.NoError(t, err)
		return string(b)
	}
	require.Equal(t, strings.Replace(greetSh, `"Hello, $1"`, `"Hello, $1!"`, 1), read("src/greet.sh"))
	require.Equal(t, utilSh, read("src/util.sh"), "the failed edit changed nothing")
	require.Equal(t, "- greet ends with an exclamation mark\n", read("docs/CHANGELOG.md"))
	require.Equal(t, outside, read("../outside.txt"))
	after, err := os.Stat(filepath.Join(ws, "../outside.txt"))
	require.NoError(t, err)
	require.Equal(t, outsideInfo.ModTime(), after.ModTime())
	_, err = os.Stat(filepath.Join(ws, "../escaped.txt"))
	require.ErrorIs(t, err, os.ErrNotExist)
	entries, err := os.ReadDir(filepath.Dir(ws))
	require.NoError(t, err)
	require.Len(t, entries, 2, "nothing new next to the workspace")

	// The events: each call starts, may stream, and ends, with the result
	// message's error flag; bash streams before it ends.
	events := e.events(run)
	type callEvents struct {
		start, end int
		updates    []int
		isError    bool
	}
	calls := map[string]*callEvents{}
	for i, ev := range events {
		c := calls[ev.ToolCallID]
		switch ev.Type {
		case agent.EventToolExecutionStart:
			calls[ev.ToolCallID] = &callEvents{start: i, end: -1}
		case agent.EventToolExecutionUpdate:
			c.updates = append(c.updates, i)
		case agent.EventToolExecutionEnd:
			c.end, c.isError = i, ev.IsError
		}
	}
	require.Len(t, calls, len(order))
	for id, c := range calls {
		require.Greater(t, c.end, c.start, id)
		require.Equal(t, results[id].IsError, c.isError, id)
		for _, u := range c.updates {
			require.True(t, c.start < u && u < c.end, "%s: update outside start..end", id)
		}
	}
	b2 := calls["b2"]
	require.NotEmpty(t, b2.updates, "bash sent partial results")
	sawRunning := false
	for _, u := range b2.updates {
		text := agent.TextOf(events[u].PartialResult.Content)
		if text == "running tests\n" {
			sawRunning = true
		}
		require.True(t, strings.HasPrefix("running tests\nPASS\n", text), "partial %q", text)
	}
	require.True(t, sawRunning, "a partial result showed the output before the command ended")
	for _, id := range []string{"ls1", "r1", "e2", "w1", "x1"} {
		require.Empty(t, calls[id].updates, "%s sends no partial results", id)
	}

	// The reads were one parallel batch: all five scheduled by one workflow
	// task, so none waited for another.
	batch := map[int64][]string{}
	for _, s := range scheduledTools(t, e.history(run)) {
		if s.input.ToolName == "read" {
			batch[s.event.GetActivityTaskScheduledEventAttributes().GetWorkflowTaskCompletedEventId()] = append(
				batch[s.event.GetActivityTaskScheduledEventAttributes().GetWorkflowTaskCompletedEventId()], s.input.ToolCallID)
		}
	}
	require.Len(t, batch, 2, "the batch of reads, then x3")
	found := false
	for _, ids := range batch {
		if len(ids) == 5 {
			found = true
			require.Equal(t, []string{"r1", "r2", "r3", "r4", "r5"}, ids)
		}
	}
	require.True(t, found, "the five reads were scheduled together: %v", batch)
}

// scheduled is an ExecuteToolCall ActivityTaskScheduled event and its input.
type scheduled struct {
	event   *historypb.HistoryEvent
	input   activities.ExecuteInput
	summary string
}

func scheduledTools(t *testing.T, h *historypb.History) []scheduled {
	t.Helper()
	dc := converter.GetDefaultDataConverter()
	var out []scheduled
	for _, ev := range h.Events {
		attrs := ev.GetActivityTaskScheduledEventAttributes()
		if attrs == nil || attrs.GetActivityType().GetName() != "ExecuteToolCall" {
			continue
		}
		s := scheduled{event: ev}
		require.NoError(t, dc.FromPayloads(attrs.GetInput(), &s.input))
		if p := ev.GetUserMetadata().GetSummary(); p != nil {
			require.NoError(t, dc.FromPayload(p, &s.summary))
		}
		out = append(out, s)
	}
	return out
}

// --- durability ----------------------------------------------------------

// spy passes calls to a tool and records their idempotency keys.
type spy struct {
	tools.Tool
	mu   *sync.Mutex
	keys map[string]string // call id -> key
}

func (s spy) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	s.mu.Lock()
	s.keys[call.ID] = call.IdempotencyKey
	s.mu.Unlock()
	return s.Tool.Execute(ctx, call)
}

type spyPreparer struct{ spy }

func (s spyPreparer) PrepareArguments(args map[string]any) (map[string]any, error) {
	return s.Tool.(tools.ArgumentPreparer).PrepareArguments(args)
}

func TestE2EDurabilityInHistory(t *testing.T) {
	ws := project(t)
	var mu sync.Mutex
	keys := map[string]string{}
	var ts []tools.Tool
	for _, tool := range tools.Builtins(tools.BuiltinOptions{BashOutputDir: t.TempDir()}) {
		s := spy{Tool: tool, mu: &mu, keys: keys}
		if _, ok := tool.(tools.ArgumentPreparer); ok {
			ts = append(ts, spyPreparer{s})
		} else {
			ts = append(ts, s)
		}
	}
	e := newE2E(t, []llm.ScriptedResponse{
		answer(call("c-bash", "bash", map[string]any{"command": "sh test.sh || true"}),
			call("c-write", "write", map[string]any{"path": "notes.txt", "content": "hi\n"}),
			call("c-read", "read", map[string]any{"path": "src/greet.sh"}),
			call("c-edit", "edit", map[string]any{"path": "src/util.sh", "oldText": "thrice", "newText": "triple"}),
			call("c-ls", "ls", map[string]any{}),
			call("c-grep", "grep", map[string]any{"pattern": "TODO"}),
			call("c-find", "find", map[string]any{"pattern": "*.md"})),
		answer(agent.Text("done")),
	}, ts)
	run := e.start(input(ws, allTools...))
	res := e.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	for _, m := range res.Messages[2:9] {
		require.False(t, m.IsError, "%s: %s", m.ToolCallID, agent.TextOf(m.Content))
	}

	type policy struct {
		summary     string
		maxAttempts int32
		timeout     time.Duration
	}
	got := map[string]policy{}
	for _, s := range scheduledTools(t, e.history(run)) {
		attrs := s.event.GetActivityTaskScheduledEventAttributes()
		require.Equal(t, e.queue, attrs.GetTaskQueue().GetName())
		require.Equal(t, 30*time.Second, attrs.GetHeartbeatTimeout().AsDuration(), s.input.ToolName)
		require.Equal(t, ws, s.input.Workspace)
		got[s.input.ToolName] = policy{s.summary, attrs.GetRetryPolicy().GetMaximumAttempts(), attrs.GetStartToCloseTimeout().AsDuration()}
	}
	bashTimeout := tools.MaxBashTimeout + tools.BashKillGrace + time.Minute
	require.Equal(t, map[string]policy{
		"bash":  {"bash: sh test.sh || true", 1, bashTimeout},
		"write": {"write: notes.txt", 3, 10 * time.Minute},
		"read":  {"read: src/greet.sh", 3, 10 * time.Minute},
		"edit":  {"edit: src/util.sh", 1, 10 * time.Minute},
		"ls":    {"ls", 3, 10 * time.Minute},
		"grep":  {"grep: TODO", 3, 10 * time.Minute},
		"find":  {"find: *.md", 3, 10 * time.Minute},
	}, got)

	require.Len(t, keys, 7)
	seen := map[string]bool{}
	for id, key := range keys {
		// workflow id / tool call id / run id / activity id: stable across
		// retries, distinct for a reused tool call id.
		require.True(t, strings.HasPrefix(key, run.GetID()+"/"+id+"/"+run.GetRunID()+"/"), key)
		require.False(t, seen[key])
		seen[key] = true
	}
}

// --- no process outlives an aborted, timed-out or cancelled bash call ----

// treeCommand starts a process tree (the shell, a nested sh and two
// background sleeps, all holding marker in their command lines) and
// writes "started" to the file started.
func treeCommand(marker string) string {
	return `sh -c 'sleep ` + marker + ` & sleep ` + marker + ` & echo started > started; wait' # ` + marker
}

func bashOnly(t *testing.T, script []llm.ScriptedResponse) (*e2e, string) {
	ws := t.TempDir()
	return newE2E(t, script, tools.Builtins(tools.BuiltinOptions{BashOutputDir: t.TempDir()})), ws
}

func TestE2EAbortKillsBashProcessTree(t *testing.T) {
	marker := tools.SleepMarker()
	e, ws := bashOnly(t, []llm.ScriptedResponse{
		answer(call("b1", "bash", map[string]any{"command": treeCommand(marker)})),
		answer(agent.Text("never")),
	})
	run := e.start(input(ws, "bash"))
	requireTree(t, ws, marker)
	start := time.Now()
	e.abort(run, "stop")
	res := e.result(run)
	t.Logf("abort to end of run: %v", time.Since(start))

	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.Len(t, res.Messages, 4)
	require.Equal(t, agent.RoleToolResult, res.Messages[2].Role)
	require.True(t, res.Messages[2].IsError)
	require.Equal(t, "Command aborted", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, agent.AbortedErrorMessage, res.Messages[3].ErrorMessage)
	tools.RequireNoProcessesWith(t, marker, 5*time.Second)
}

func TestE2EBashTimeoutKillsProcessTreeAndTheRunGoesOn(t *testing.T) {
	marker := tools.SleepMarker()
	e, ws := bashOnly(t, []llm.ScriptedResponse{
		answer(call("b1", "bash", map[string]any{"command": treeCommand(marker), "timeout": 1})),
		answer(agent.Text("it timed out")),
	})
	run := e.start(input(ws, "bash"))
	requireTree(t, ws, marker)
	res := e.result(run)

	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.True(t, res.Messages[2].IsError)
	require.Equal(t, "Command timed out after 1 seconds", agent.TextOf(res.Messages[2].Content))
	require.Equal(t, "it timed out", agent.TextOf(res.Messages[3].Content))
	tools.RequireNoProcessesWith(t, marker, 5*time.Second)
}

// A workflow cancellation aborts the run; here the tree also ignores
// SIGTERM, so only the SIGKILL after the grace period ends it.
func TestE2EWorkflowCancelKillsBashProcessTree(t *testing.T) {
	marker := tools.SleepMarker()
	e, ws := bashOnly(t, []llm.ScriptedResponse{
		answer(call("b1", "bash", map[string]any{"command": "trap '' TERM; " + treeCommand(marker)})),
		answer(agent.Text("never")),
	})
	run := e.start(input(ws, "bash"))
	requireTree(t, ws, marker)
	require.NoError(t, e.c.CancelWorkflow(context.Background(), run.GetID(), run.GetRunID()))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := run.Get(ctx, nil)
	var cancelled *temporal.CanceledError
	require.True(t, errors.As(err, &cancelled), "%v", err)
	var res agentapi.AgentLoopResult
	require.NoError(t, cancelled.Details(&res))
	require.Equal(t, agent.StopReasonAborted, res.StopReason)
	require.True(t, res.Messages[2].IsError)
	require.Equal(t, "Command aborted", agent.TextOf(res.Messages[2].Content))
	tools.RequireNoProcessesWith(t, marker, 5*time.Second)
}

// requireTree waits until treeCommand's tree runs: the file started,
// and the shell, the nested sh and both sleeps alive.
func requireTree(t *testing.T, ws, marker string) {
	t.Helper()
	require.Eventually(t, func() bool {
		_, err := os.Stat(filepath.Join(ws, "started"))
		return err == nil && len(tools.ProcessesWith(marker)) >= 4
	}, 20*time.Second, 10*time.Millisecond, "the process tree did not start")
}

// --- tools on the machine that holds the workspace ------------------------

// elsewhere is a tool with a real tool's definition that must never run:
// it stands for the workflow worker's machine, which lacks the workspace.
type elsewhere struct{ tools.Tool }

func (elsewhere) Execute(context.Context, tools.Call) (agent.ToolResult, error) {
	return agent.TextResult("ran on the workflow worker"), nil
}

func TestE2EToolTaskQueueRunsToolsOnTheWorkspaceWorker(t *testing.T) {
	wsA, wsB := t.TempDir(), t.TempDir()
	script := []llm.ScriptedResponse{
		answer(call("w1", "write", map[string]any{"path": "landed.txt", "content": "on B\n"}),
			call("b1", "bash", map[string]any{"command": "pwd"})),
		answer(call("l1", "ls", map[string]any{})),
		answer(agent.Text("done")),
	}
	// Worker A: the workflow, model turns and local activities; its tools
	// and default workspace are not the workspace's.
	c := testenv.Client(t)
	var fakes []tools.Tool
	for _, tool := range tools.Builtins(tools.BuiltinOptions{BashOutputDir: t.TempDir()}) {
		fakes = append(fakes, elsewhere{tool})
	}
	e := &e2e{t: t, c: c, queue: "tools-e2e-a-" + testenv.Suffix()}
	e.acts = agentworker.NewActivities(agentworker.Options{Client: c, Store: testenv.Store(t), Models: scriptedModels(script), Tools: tools.NewRegistry(fakes...), DefaultWorkspace: wsA})
	e.startWorker(e.queue, e.acts, true, "worker-a")
	// Worker B: only activities, on its own queue, holding the workspace.
	queueB := "tools-e2e-b-" + testenv.Suffix()
	actsB := agentworker.NewActivities(agentworker.Options{Client: c, Store: testenv.Store(t),
		Tools: tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{BashOutputDir: t.TempDir()})...), DefaultWorkspace: wsB})
	e.startWorker(queueB, actsB, false, "tool-worker-b")

	in := input("", "write", "bash", "ls")
	in.ToolTaskQueue = queueB
	run := e.start(in)
	res := e.result(run)
	require.Equal(t, agent.StopReasonStop, res.StopReason)
	require.Equal(t, "Successfully wrote 5 bytes to landed.txt", agent.TextOf(res.Messages[2].Content))
	realB, err := filepath.EvalSymlinks(wsB)
	require.NoError(t, err)
	require.Equal(t, realB+"\n", agent.TextOf(res.Messages[3].Content))
	require.Equal(t, "landed.txt", agent.TextOf(res.Messages[5].Content))

	b, err := os.ReadFile(filepath.Join(wsB, "landed.txt"))
	require.NoError(t, err)
	require.Equal(t, "on B\n", string(b))
	entries, err := os.ReadDir(wsA)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing ran in A's workspace")

	h := e.history(run)
	sched := scheduledTools(t, h)
	require.Len(t, sched, 3)
	byScheduled := map[int64]string{}
	for _, s := range sched {
		require.Equal(t, queueB, s.event.GetActivityTaskScheduledEventAttributes().GetTaskQueue().GetName())
		byScheduled[s.event.GetEventId()] = s.input.ToolName
	}
	started := 0
	for _, ev := range h.Events {
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			if _, ok := byScheduled[a.GetScheduledEventId()]; ok {
				require.Equal(t, "tool-worker-b", a.GetIdentity())
				started++
			}
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "ModelTurn" {
			require.Equal(t, e.queue, a.GetTaskQueue().GetName(), "model turns stay on the workflow's queue")
		}
	}
	require.Equal(t, 3, started)
}
