package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/hooks"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

// ModelProvider is the provider name the scenario's scripted model is
// registered under.
const ModelProvider = "faux"

// abortLatency is the conformance worker's heartbeat throttle. The
// reference aborts in-process at once; a low throttle lets a running test
// tool see an abort before its delay ends, as pi's tools do.
const abortLatency = 20 * time.Millisecond

// Result is a scenario run: its normalized trace and where it ran.
type Result struct {
	Trace      []string
	WorkflowID string
	RunID      string
}

// Run plays a scenario through the AgentLoop workflow on the server c talks
// to, with a worker of its own on a fresh task queue holding the scenario's
// tools, hooks and scripted model, and returns the normalized trace read
// back with QueryEvents.
func Run(ctx context.Context, c client.Client, s Scenario) (Result, error) {
	return RunWith(ctx, c, s, Input(s), ModelRegistry(s), ToolRegistry(s))
}

// RunWith is Run with the input, models and tools given: a scenario whose
// tool stands for something the workflow does itself (a sub-agent).
func RunWith(ctx context.Context, c client.Client, s Scenario, in agentapi.AgentLoopInput, models *llm.Registry, ts *tools.Registry) (Result, error) {
	return run(ctx, c, s, in, models, ts, StartGoRemoteWorker)
}

// RunOn is Run with the scenario's remote tools and hooks served by the
// worker remote starts (StartGoRemoteWorker for Run; a TypeScriptWorker's
// Start for one in another SDK language).
func RunOn(ctx context.Context, c client.Client, s Scenario, remote RemoteWorker) (Result, error) {
	return run(ctx, c, s, Input(s), ModelRegistry(s), ToolRegistry(s), remote)
}

func run(ctx context.Context, c client.Client, s Scenario, in agentapi.AgentLoopInput, models *llm.Registry, ts *tools.Registry, remote RemoteWorker) (Result, error) {
	suffix := randomSuffix()
	taskQueue := "conformance-" + suffix
	st, err := Store()
	if err != nil {
		return Result{}, err
	}
	opts := workflows.WorkerOptions()
	opts.MaxHeartbeatThrottleInterval = abortLatency
	w, err := agentworker.New(agentworker.Options{Client: c, Store: st, TaskQueue: taskQueue, WorkerOptions: &opts,
		Models: models, Tools: ts, Hooks: HookRegistry(s), HeartbeatInterval: abortLatency})
	if err != nil {
		return Result{}, err
	}
	if err := w.Start(); err != nil {
		return Result{}, fmt.Errorf("start worker: %w", err)
	}
	defer w.Stop()
	if usesRemoteWorker(s) {
		queue := taskQueue + "-remote"
		declareRemote(&in, s, queue)
		stop, err := remote(c, s, queue)
		if err != nil {
			return Result{}, err
		}
		defer stop()
	}

	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        "conformance-" + s.Name + "-" + suffix,
		TaskQueue: taskQueue,
	}, agentapi.AgentLoopWorkflow, in)
	if err != nil {
		return Result{}, fmt.Errorf("start workflow: %w", err)
	}
	var out agentapi.AgentLoopResult
	if err := run.Get(ctx, &out); err != nil {
		return Result{}, fmt.Errorf("run %s: %w", run.GetID(), err)
	}
	events, err := agentclient.Events(ctx, c, run.GetID(), run.GetRunID())
	if err != nil {
		return Result{}, err
	}
	if events, err = agentclient.ResolveEvents(ctx, st, events); err != nil {
		return Result{}, err
	}
	res := Result{WorkflowID: run.GetID(), RunID: run.GetRunID()}
	for _, e := range events {
		if line, ok := TraceLine(e); ok {
			res.Trace = append(res.Trace, line)
		}
	}
	return res, nil
}

var (
	storeOnce sync.Once
	st        *store.Store
	storeErr  error
)

// Store is the content store the conformance workers of this process
// share: a directory under the system's temporary directory.
func Store() (*store.Store, error) {
	storeOnce.Do(func() {
		st, storeErr = store.Open(filepath.Join(os.TempDir(), "agentloop-conformance-content"), store.Options{})
	})
	return st, storeErr
}

// Input is the workflow input for a scenario.
func Input(s Scenario) agentapi.AgentLoopInput {
	prompt := "go"
	if s.Prompt != nil {
		prompt = *s.Prompt
	}
	in := agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			SystemPrompt:  s.SystemPrompt,
			Model:         agent.ModelRef{Provider: ModelProvider, ID: scriptID(s)},
			ToolExecution: agent.ExecutionMode(s.ToolExecution),
			SteeringMode:  agent.QueueMode(s.SteeringMode),
			FollowUpMode:  agent.QueueMode(s.FollowUpMode),
			// A trace is compared once the run has ended, so holding a
			// parallel batch's events longer costs nothing here. The
			// window is counted from the batch's start, and on a loaded
			// machine a sibling's result can come later than 10 s (seen
			// at load 37 on 2 cores: an after hook's end came before an
			// earlier call's); the longest window allowed keeps pi's
			// order there too.
			EventOrderWindow: "1m",
		},
		Prompts: []agent.Message{agent.UserText(prompt, 0)},
	}
	for _, t := range s.Tools {
		if !t.Remote {
			in.Tools = append(in.Tools, t.Name)
		}
	}
	for _, t := range s.Queued.Steer {
		in.Steering = append(in.Steering, agent.UserText(t, 0))
	}
	for _, t := range s.Queued.FollowUp {
		in.FollowUps = append(in.FollowUps, agent.UserText(t, 0))
	}
	if s.StopAfterTurn > 0 {
		in.StopAfterTurn = &agent.StopRule{Turns: s.StopAfterTurn}
	}
	if len(s.Hooks.BeforeToolCall) > 0 {
		in.BeforeToolCall = agent.HookNames(HookName)
	}
	if len(s.Hooks.AfterToolCall) > 0 {
		in.AfterToolCall = agent.HookNames(HookName)
	}
	declareRemote(&in, s, defaultRemoteQueue)
	return in
}

func scriptID(s Scenario) string {
	if s.Name == "" {
		return "scenario"
	}
	return s.Name
}

// ModelRegistry is a registry holding the scenario's scripted model.
func ModelRegistry(s Scenario) *llm.Registry {
	p := llm.NewScriptedProvider()
	p.Add(scriptID(s), llm.Script{Responses: s.Model})
	r := llm.NewRegistry()
	r.Register(ModelProvider, p)
	return r
}

// ToolRegistry is a registry holding the scenario's test tools.
func ToolRegistry(s Scenario) *tools.Registry {
	r := tools.NewRegistry()
	for _, t := range s.Tools {
		if !t.Remote {
			r.Register(scenarioTool{spec: t})
		}
	}
	return r
}

// HookRegistry is a registry holding the scenario's hook rules.
func HookRegistry(s Scenario) *hooks.Registry {
	r := hooks.NewRegistry()
	registerHooks(r, s.Hooks)
	return r
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
