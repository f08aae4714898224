package mcptools_test

// MCP tools inside the AgentLoop workflow on a real Temporal dev server:
// a scripted model calls the tools of real MCP servers through
// PrepareToolCall, ExecuteToolCall and FinalizeToolCall, and the test kills
// a server in the middle of a call.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
	"github.com/durable-agents/agentloop/tools/mcptools"
	"github.com/durable-agents/agentloop/workflows"
)

func TestMain(m *testing.M) { testenv.MainCheckingLeaks(m) }

// observed wraps a tool to tell the test when a call first reports
// progress; the call itself is the real tool's.
type observed struct {
	tools.Tool
	progress chan<- string
}

func (o observed) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	update := call.Update
	call.Update = func(r agent.ToolResult) {
		select {
		case o.progress <- call.IdempotencyKey:
		default:
		}
		if update != nil {
			update(r)
		}
	}
	return o.Tool.Execute(ctx, call)
}

func TestWorkflowRunsMCPToolsAndSurvivesAKilledServer(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("AGENTLOOP_TEST_MCP_TOKEN", plantedToken)
	cfg, err := mcptools.ParseConfig([]byte(`{"mcpServers": {
		"fs": {"sandbox": "none", "command": `+quote(serverBin(t, "mcp-server-filesystem"))+`, "args": [`+quote(ws)+`]},
		"everything": {"sandbox": "none", "command": `+quote(serverBin(t, "mcp-server-everything"))+`, "env": {"MCP_TOKEN": "${AGENTLOOP_TEST_MCP_TOKEN}"}}}}`), os.Getenv)
	require.NoError(t, err)
	j, err := journal.Open(t.TempDir())
	require.NoError(t, err)
	progress := make(chan string, 1)
	m := mcptools.New(cfg, mcptools.Options{Wrap: func(tool tools.Tool) tools.Tool {
		// As the worker does: single-attempt tools are journaled.
		return observed{Tool: journal.Wrap(j, []tools.Tool{tool})[0], progress: progress}
	}})
	t.Cleanup(m.Close)
	m.Start(context.Background())
	reg := tools.NewRegistry(tools.Builtins(tools.BuiltinOptions{})...)
	reg.AddSource(m)

	notes := filepath.Join(ws, "notes.md")
	script := []llm.ScriptedResponse{
		{Content: []agent.Content{
			agent.ToolCall("w1", "fs__write_file", map[string]any{"path": notes, "content": "# Notes\ntodo: ship\n"}),
			agent.ToolCall("bad", "fs__read_text_file", map[string]any{"head": 1}), // no path
			agent.ToolCall("nope", "everything__get-env", map[string]any{}),        // not one of the run's tools
		}},
		{Content: []agent.Content{
			agent.ToolCall("e1", "fs__edit_file", map[string]any{"path": notes, "edits": []any{
				map[string]any{"oldText": "todo: ship", "newText": "done: shipped"}}}),
		}},
		{Content: []agent.Content{
			agent.ToolCall("long", "everything__trigger-long-running-operation", map[string]any{"duration": 4, "steps": 8}),
		}},
		{Content: []agent.Content{agent.ToolCall("echo", "everything__echo", map[string]any{"message": "hi"})}},
		{Content: []agent.Content{agent.Text("Done.")}},
	}
	scripted := llm.NewScriptedProvider()
	scripted.Add("script", llm.Script{Responses: script})
	models := llm.NewRegistry()
	models.Register("test", scripted)
	c := testenv.Client(t)
	opts := workflows.WorkerOptions()
	opts.MaxHeartbeatThrottleInterval = 50 * time.Millisecond
	queue := "mcp-e2e-" + testenv.Suffix()
	w, err := agentworker.New(agentworker.Options{Client: c, Store: testenv.Store(t), TaskQueue: queue, Models: models, Tools: reg,
		DefaultWorkspace: ws, HeartbeatInterval: opts.MaxHeartbeatThrottleInterval, WorkerOptions: &opts})
	require.NoError(t, err)
	require.NoError(t, w.Start())
	t.Cleanup(w.Stop)

	// Kill the everything server once the long call has reported progress.
	var killed sync.WaitGroup
	killed.Add(1)
	go func() {
		defer killed.Done()
		<-progress
		p := m.Process("everything")
		if p != nil {
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
	}()

	run := testenv.Start(t, c, queue, "mcp-e2e-", agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: "test", ID: "script"},
			Tools:     []string{"fs__*", "everything__trigger-long-running-operation", "everything__echo"},
			Workspace: ws,
		},
		Prompt: "Take notes, then run the long operation.",
	})
	res := testenv.Result(t, run, 2*time.Minute)
	killed.Wait()
	require.Equal(t, agent.StopReason("stop"), res.StopReason, res.ErrorMessage)

	results := map[string]agent.Message{}
	for _, msg := range res.Messages {
		if msg.Role == agent.RoleToolResult {
			results[msg.ToolCallID] = msg
		}
	}
	body := func(id string) string {
		var parts []string
		for _, c := range results[id].Content {
			parts = append(parts, c.Text)
		}
		return strings.Join(parts, "\n")
	}
	require.False(t, results["w1"].IsError, body("w1"))
	require.True(t, results["bad"].IsError)
	require.Contains(t, body("bad"), `Validation failed for tool "fs__read_text_file"`)
	require.True(t, results["nope"].IsError)
	require.Equal(t, "Tool everything__get-env not found", body("nope"))
	require.False(t, results["e1"].IsError, body("e1"))
	got, err := os.ReadFile(notes)
	require.NoError(t, err)
	require.Equal(t, "# Notes\ndone: shipped\n", string(got))
	require.False(t, results["long"].IsError, body("long"))
	require.Equal(t, "Long running operation completed. Duration: 4 seconds, Steps: 8.", body("long"))
	require.Equal(t, "Echo: hi", body("echo"))

	events := testenv.Events(t, c, run)
	var sawProgress bool
	for _, e := range events {
		if e.Type == agent.EventToolExecutionUpdate && e.ToolCallID == "long" {
			sawProgress = sawProgress || strings.HasPrefix(e.PartialResult.Content[0].Text, "Progress ")
		}
	}
	require.True(t, sawProgress, "progress notifications are partial results")

	// The killed attempt failed and Temporal ran the read-only tool again
	// on a restarted server; no workflow task failed, and the config's
	// token never entered history.
	h, err := testenv.History(context.Background(), c, run.GetID(), run.GetRunID())
	require.NoError(t, err)
	var attempts []int32
	for _, ev := range h.Events {
		require.NotEqual(t, enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, ev.GetEventType())
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			attempts = append(attempts, a.GetAttempt())
		}
		require.NotContains(t, ev.String(), plantedToken)
	}
	require.Equal(t, int32(2), slices.Max(attempts), "one retried attempt: the killed call's")
}
