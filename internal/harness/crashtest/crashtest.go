package crashtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
	"github.com/durable-agents/agentloop/workflows"
)

// Model ids of the scripts the worker serves under provider "scripted".
const (
	ModelStream   = "crash-stream"   // one long streamed answer, then a tool call
	ModelReadOnly = "crash-readonly" // one slow_read call
	ModelBash     = "crash-bash"     // one bash call that sleeps then appends to marker
	ModelPrepare  = "crash-prepare"  // one bash call behind the blocking before hook
	ModelJournal  = "crash-journal"  // one bash call whose outcome the journal records
	ModelRestart  = "crash-restart"  // one slow_read call held until Release exists, for a server restart
	ModelDeploy   = "crash-deploy"   // two slow_read turns, so a deploy can land in between
	ModelApproval = "crash-approval" // one bash call that waits for a person, then appends to marker
	// Long variants, for stopping a worker mid-way however long the next
	// worker takes to start. The held ones run until the test writes
	// Release into the workspace.
	ModelLongStream = "crash-long-stream" // ModelStream's first turn, LongStreamChunks long
	ModelLongRead   = "crash-long-read"   // one slow_read call held until Release exists
	ModelLongBash   = "crash-long-bash"   // one bash call held until Release exists, then appends to marker
)

// Names the worker registers.
const (
	SlowReadTool = "slow_read"
	BlockHook    = "crashtest_block"
	// SlowReadTimeout is slow_read's start-to-close timeout: short, so a
	// lost attempt is retried within seconds instead of after the 30 s
	// heartbeat timeout the workflow sets.
	SlowReadTimeout = 6 * time.Second
	// SlowReadLog is the file in the workspace slow_read appends a line to
	// when an attempt starts ("start ...") and ends ("end ...").
	SlowReadLog = "slow_read.log"
	// Marker is the file in the workspace the scripted bash commands
	// append to: one line per command that ran to its end. Started gets a
	// line when the sleeping command begins.
	Marker  = "marker"
	Started = "started"
	// Release is the file in the workspace whose existence lets the held
	// tools go on: a test that stops a worker mid-tool writes it only once
	// the stop is done, so the tool is still running however loaded the
	// machine is.
	Release = "release"
	// StreamChunks and StreamDelay shape the stream script's first turn.
	StreamChunks = 60
	StreamDelay  = 100 * time.Millisecond
	// The scripted bash commands.
	BashSleepMarker = "echo started >> " + Started + "; sleep 2; echo done >> " + Marker
	BashJournal     = "echo done >> " + Marker + "; echo journaled-output"
	BashPrepare     = "echo ran >> " + Marker + "; echo prepared-output"
	BashApproved    = "echo approved >> " + Marker + "; echo approved-output"
	BashHeld        = "echo started >> " + Started + "; until [ -e " + Release + " ]; do sleep 0.05; done; echo done >> " + Marker
	// LongStreamChunks is the long stream's length in chunks (12 s).
	LongStreamChunks = 120
)

// Workflow variants the worker can register under the AgentLoop type name.
const (
	// VariantPlain is workflows.AgentLoop as shipped.
	VariantPlain = "plain"
	// VariantUnguarded adds a RecordRunStart activity before the loop:
	// replaying a history recorded by the plain variant fails.
	VariantUnguarded = "unguarded"
	// VariantGuarded adds the same activity behind workflow.GetVersion:
	// runs started before the change replay; new runs record the activity.
	VariantGuarded = "guarded"
	// AuditChangeID is the change id of VariantGuarded's GetVersion.
	AuditChangeID = "crashtest-record-run-start"
	// AuditActivity appends the run id to AuditLog in the worker's dir.
	AuditActivity = "RecordRunStart"
	AuditLog      = "audit.log"
)

// StreamText is what the stream script's first turn says: StreamChunks
// chunks of 16 characters, so the turn streams for about
// StreamChunks*StreamDelay.
func StreamText() string { return strings.Repeat("streaming chunk ", StreamChunks) }

// LongStreamText is what the long stream script's first turn says.
func LongStreamText() string { return strings.Repeat("streaming chunk ", LongStreamChunks) }

// Scripts returns every scripted model the worker serves.
func Scripts() map[string]llm.Script {
	done := llm.ScriptedResponse{Content: []agent.Content{agent.Text("done")}}
	one := func(c agent.Content) []llm.ScriptedResponse {
		return []llm.ScriptedResponse{{Content: []agent.Content{c}}, done}
	}
	return map[string]llm.Script{
		ModelStream: {ChunkDelay: StreamDelay, Responses: []llm.ScriptedResponse{
			{Content: []agent.Content{agent.Text(StreamText()), agent.ToolCall("call-ls", "ls", map[string]any{})}},
			done,
		}},
		ModelReadOnly: {Responses: one(agent.ToolCall("call-read", SlowReadTool, map[string]any{"path": "notes.txt", "sleepMs": 2000}))},
		ModelLongStream: {ChunkDelay: StreamDelay, Responses: []llm.ScriptedResponse{
			{Content: []agent.Content{agent.Text(LongStreamText()), agent.ToolCall("call-ls", "ls", map[string]any{})}},
			done,
		}},
		ModelLongRead: {Responses: one(agent.ToolCall("call-read", SlowReadTool, map[string]any{"path": "notes.txt", "untilFile": Release}))},
		ModelLongBash: {Responses: one(agent.ToolCall("call-bash", tools.BashToolName, map[string]any{"command": BashHeld}))},
		ModelBash:     {Responses: one(agent.ToolCall("call-bash", tools.BashToolName, map[string]any{"command": BashSleepMarker}))},
		ModelPrepare:  {Responses: one(agent.ToolCall("call-prep", tools.BashToolName, map[string]any{"command": BashPrepare}))},
		ModelJournal:  {Responses: one(agent.ToolCall("call-journal", tools.BashToolName, map[string]any{"command": BashJournal}))},
		ModelApproval: {Responses: one(agent.ToolCall("call-approve", tools.BashToolName, map[string]any{"command": BashApproved}))},
		ModelRestart:  {Responses: one(agent.ToolCall("call-restart", SlowReadTool, map[string]any{"path": "notes.txt", "untilFile": Release}))},
		ModelDeploy: {Responses: []llm.ScriptedResponse{
			{Content: []agent.Content{agent.ToolCall("call-d1", SlowReadTool, map[string]any{"path": "notes.txt", "sleepMs": 3000})}},
			{Content: []agent.Content{agent.ToolCall("call-d2", SlowReadTool, map[string]any{"path": "notes.txt", "sleepMs": 100})}},
			done,
		}},
	}
}

// Models returns a registry with the scripts, and the context model, under
// provider "scripted".
func Models() *llm.Registry {
	p := llm.NewScriptedProvider()
	for id, s := range Scripts() {
		p.Add(id, s)
	}
	r := llm.NewRegistry()
	r.Register(llm.ScriptedProviderName, llm.ProviderFunc(func(id string) (llm.Model, error) {
		switch id {
		case ModelContext:
			return contextModel{}, nil
		case ModelCompact:
			return compactModel{}, nil
		}
		return p.Model(id)
	}))
	return r
}

// SlowRead is a read-only tool that sleeps sleepMs, or waits until the
// workspace file untilFile exists, before reading a file in the workspace,
// so a test can kill its worker while it runs. It appends one
// line per attempt to SlowReadLog, which is how tests count executions.
// Timeout is its start-to-close timeout; zero means SlowReadTimeout.
type SlowRead struct{ Timeout time.Duration }

// Definition implements tools.Tool.
func (s SlowRead) Definition() tools.Definition {
	timeout := s.Timeout
	if timeout == 0 {
		timeout = SlowReadTimeout
	}
	return tools.Definition{
		Name:        SlowReadTool,
		Description: "Reads a file slowly: sleeps sleepMs milliseconds, or until the workspace file untilFile exists, first.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string"},"sleepMs":{"type":"number"},"untilFile":{"type":"string"}},"required":["path"]}`),
		Workspace:  true,
		Durability: tools.Durability{Retry: tools.RetrySafe, Timeout: timeout},
	}
}

// Execute implements tools.Tool.
func (SlowRead) Execute(ctx context.Context, call tools.Call) (agent.ToolResult, error) {
	path, _ := call.Args["path"].(string)
	sleep, _ := call.Args["sleepMs"].(float64)
	logLine := func(what string) {
		appendLine(filepath.Join(call.Workspace, SlowReadLog),
			fmt.Sprintf("%s pid=%d call=%s key=%s", what, os.Getpid(), call.ID, call.IdempotencyKey))
	}
	logLine("start")
	if err := hold(ctx, time.Duration(sleep)*time.Millisecond, call.Args["untilFile"], call.Workspace); err != nil {
		return agent.ToolResult{}, err
	}
	b, err := os.ReadFile(filepath.Join(call.Workspace, path))
	if err != nil {
		return agent.ToolResult{}, err
	}
	logLine("end")
	return agent.TextResult(string(b)), nil
}

// hold waits d, or until the workspace file untilFile (when it is a
// non-empty string) exists, or until ctx ends.
func hold(ctx context.Context, d time.Duration, untilFile any, workspace string) error {
	name, _ := untilFile.(string)
	if name == "" {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return fmt.Errorf("Operation aborted")
		}
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(filepath.Join(workspace, name)); err == nil {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("Operation aborted")
		}
	}
}

// BlockingHook is a before hook that writes prepare-<call id>.<pid> into dir
// and then blocks for d: it widens the window between a call's
// tool_execution_start and the start of its execute activity.
func BlockingHook(dir string, d time.Duration) hooks.Before {
	return func(ctx context.Context, c hooks.BeforeContext) (*hooks.BeforeResult, error) {
		appendLine(filepath.Join(dir, fmt.Sprintf("prepare-%s.%d", c.ToolCall.ID, os.Getpid())), "entered")
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
		return nil, nil
	}
}

// ToolOptions configure the worker's tools.
type ToolOptions struct {
	// SlowReadTimeout is slow_read's start-to-close timeout; zero means
	// SlowReadTimeout.
	SlowReadTimeout time.Duration
	// Journal, when set, journals the single-attempt tools (bash, write).
	Journal *journal.Journal
	// PauseAfterRecord delays the report of a journaled outcome.
	PauseAfterRecord time.Duration
	// BashHeartbeat sets bash's Durability.HeartbeatTimeout, so a lost
	// worker is noticed sooner than after the default 30 s.
	BashHeartbeat time.Duration
}

// Tools returns the worker's tools: the seven built-ins and slow_read.
func Tools(o ToolOptions) []tools.Tool {
	ts := append(tools.Builtins(tools.BuiltinOptions{}), SlowRead{Timeout: o.SlowReadTimeout}, BigOutputs{})
	for i, t := range ts {
		if t.Definition().Name == tools.BashToolName && o.BashHeartbeat > 0 {
			def := t.Definition()
			def.Durability.HeartbeatTimeout = o.BashHeartbeat
			ts[i] = &redefined{Tool: t, def: def}
		}
		if o.Journal != nil && ts[i].Definition().Durability.SingleAttempt() {
			ts[i] = &journal.Journaled{Tool: ts[i], Journal: o.Journal, PauseAfterRecord: o.PauseAfterRecord}
		}
	}
	return ts
}

// redefined is a tool with a changed definition.
type redefined struct {
	tools.Tool
	def tools.Definition
}

func (r *redefined) Definition() tools.Definition { return r.def }

// Audit is the activity the changed workflow variants add.
type Audit struct{ Dir string }

// RecordRunStart appends the workflow id to AuditLog.
func (a *Audit) RecordRunStart(ctx context.Context, workflowID string) error {
	return appendLineErr(filepath.Join(a.Dir, AuditLog), workflowID)
}

// Register registers a workflow variant, the agent loop's activities and
// the audit activity on w.
func Register(w worker.Worker, acts *activities.Activities, variant string, audit *Audit) error {
	w.RegisterActivityWithOptions(audit.RecordRunStart, activity.RegisterOptions{Name: AuditActivity})
	loop := map[string]any{VariantUnguarded: UnguardedAgentLoop, VariantGuarded: GuardedAgentLoop}
	switch variant {
	case VariantPlain, "":
		workflows.Register(w, acts)
	case VariantUnguarded, VariantGuarded:
		w.RegisterWorkflowWithOptions(loop[variant], workflow.RegisterOptions{Name: agentapi.AgentLoopWorkflow, VersioningBehavior: workflows.AgentLoopVersioning})
		w.RegisterWorkflowWithOptions(workflows.AgentSession, workflow.RegisterOptions{Name: agentapi.SessionWorkflow, VersioningBehavior: workflows.SessionVersioning})
		w.RegisterActivity(acts)
	default:
		return fmt.Errorf("unknown workflow variant %q", variant)
	}
	return nil
}

// UnguardedAgentLoop is AgentLoop after a careless change: it records the
// run's start with an activity before the loop. Its first command differs
// from the one in any history AgentLoop recorded, so replay fails.
func UnguardedAgentLoop(ctx workflow.Context, in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, error) {
	if err := recordRunStart(ctx); err != nil {
		return agentapi.AgentLoopResult{}, err
	}
	return workflows.AgentLoop(ctx, in)
}

// GuardedAgentLoop is the same change behind workflow.GetVersion: a run
// whose history has no version marker (started before the change) skips
// the new activity; a new run records version 1 and runs it.
func GuardedAgentLoop(ctx workflow.Context, in agentapi.AgentLoopInput) (agentapi.AgentLoopResult, error) {
	if workflow.GetVersion(ctx, AuditChangeID, workflow.DefaultVersion, 1) == 1 {
		if err := recordRunStart(ctx); err != nil {
			return agentapi.AgentLoopResult{}, err
		}
	}
	return workflows.AgentLoop(ctx, in)
}

func recordRunStart(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second})
	return workflow.ExecuteActivity(actx, AuditActivity, workflow.GetInfo(ctx).WorkflowExecution.ID).Get(ctx, nil)
}

func appendLine(path, line string) { _ = appendLineErr(path, line) }

func appendLineErr(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// PrepareArguments passes the wrapped tool's argument preparation through.
func (r *redefined) PrepareArguments(args map[string]any) (map[string]any, error) {
	if p, ok := r.Tool.(tools.ArgumentPreparer); ok {
		return p.PrepareArguments(args)
	}
	return args, nil
}

// Host is this machine's name, as the worker names its host queue.
func Host() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown"
	}
	return h
}
