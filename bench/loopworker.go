package main

import (
	"context"
	"embed"
	"encoding/json"
	"flag"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/workflows"
)

//go:embed scenarios/*.json
var scenarioFiles embed.FS

// loopScenarios are the loop benchmark's scenarios, in the order they run.
// loop-1x0 and loop-11x0 are the baselines the per-turn and per-call costs
// are derived from (see derive).
var loopScenarios = []string{
	"loop-10x4-0ms-seq", "loop-10x4-0ms-par",
	"loop-10x4-100ms-seq", "loop-10x4-100ms-par",
	"loop-16x500ms", "loop-200x1-0ms",
	"loop-1x0", "loop-11x0",
}

// benchScenario is a scenario with its file and what it should produce.
type benchScenario struct {
	conformance.Scenario
	raw   []byte
	turns int // model calls
	calls int // tool calls
}

func loadScenarios() ([]benchScenario, error) {
	var out []benchScenario
	for _, name := range loopScenarios {
		raw, err := scenarioFiles.ReadFile(path.Join("scenarios", name+".json"))
		if err != nil {
			return nil, err
		}
		s, err := conformance.Parse(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if s.Name != name {
			return nil, fmt.Errorf("scenarios/%s.json is named %q", name, s.Name)
		}
		if len(s.Hooks.BeforeToolCall)+len(s.Hooks.AfterToolCall) > 0 {
			return nil, fmt.Errorf("%s: hooks are registered under one name per worker; bench scenarios have none", name)
		}
		b := benchScenario{Scenario: s, raw: raw, turns: len(s.Model)}
		for _, r := range s.Model {
			for _, c := range r.Content {
				if c.Type == agent.ContentToolCall {
					b.calls++
				}
			}
		}
		out = append(out, b)
	}
	return out, nil
}

// workerTuning are worker options the loop benchmark can change, to try
// what the workflow's own options would gain. Zero values keep
// workflows.WorkerOptions() and the SDK's defaults.
type workerTuning struct {
	wftPollers   int
	actPollers   int
	eagerPerTask int
	noEager      bool
	stickyCache  int
}

func (t *workerTuning) register(fs *flag.FlagSet) {
	fs.IntVar(&t.wftPollers, "wft-pollers", 0, "worker MaxConcurrentWorkflowTaskPollers (0: SDK default, 2)")
	fs.IntVar(&t.actPollers, "activity-pollers", 0, "worker MaxConcurrentActivityTaskPollers (0: SDK default, 2)")
	fs.IntVar(&t.eagerPerTask, "eager-per-task", 0, "worker MaxEagerActivityReservationsPerWorkflowTask (0: SDK default, 3)")
	fs.BoolVar(&t.noEager, "no-eager", false, "worker DisableEagerActivities")
	fs.IntVar(&t.stickyCache, "sticky-cache", 0, "worker.SetStickyWorkflowCacheSize (0: SDK default, 10000)")
}

func (t workerTuning) args() []string {
	return []string{
		"-wft-pollers", strconv.Itoa(t.wftPollers), "-activity-pollers", strconv.Itoa(t.actPollers),
		"-eager-per-task", strconv.Itoa(t.eagerPerTask), "-no-eager=" + strconv.FormatBool(t.noEager),
		"-sticky-cache", strconv.Itoa(t.stickyCache),
	}
}

func (t workerTuning) apply(o *worker.Options) {
	if t.wftPollers > 0 {
		o.MaxConcurrentWorkflowTaskPollers = t.wftPollers
	}
	if t.actPollers > 0 {
		o.MaxConcurrentActivityTaskPollers = t.actPollers
	}
	if t.eagerPerTask > 0 {
		n := t.eagerPerTask
		o.MaxEagerActivityReservationsPerWorkflowTask = &n
	}
	o.DisableEagerActivities = t.noEager
	if t.stickyCache > 0 {
		worker.SetStickyWorkflowCacheSize(t.stickyCache)
	}
}

func (t workerTuning) String() string {
	var parts []string
	if t.wftPollers > 0 {
		parts = append(parts, fmt.Sprintf("workflow-task pollers %d", t.wftPollers))
	}
	if t.actPollers > 0 {
		parts = append(parts, fmt.Sprintf("activity pollers %d", t.actPollers))
	}
	if t.eagerPerTask > 0 {
		parts = append(parts, fmt.Sprintf("eager activities per task %d", t.eagerPerTask))
	}
	if t.noEager {
		parts = append(parts, "eager activities off")
	}
	if t.stickyCache > 0 {
		parts = append(parts, fmt.Sprintf("sticky cache %d", t.stickyCache))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("workflows.WorkerOptions() (%d eager activities per task, heartbeat throttle %v) and SDK defaults (2+2 pollers, sticky cache 10000)",
			workflows.EagerToolCalls, workflows.AbortLatency)
	}
	return "workflows.WorkerOptions() plus " + strings.Join(parts, ", ")
}

// The floor: a bare workflow whose only work is n no-op activities, run
// on the same worker, measured the same way as the agent loop.
const (
	floorWorkflow = "BenchFloor"
	floorActivity = "BenchNoop"
)

// FloorInput says how many no-op activities the floor workflow runs,
// whether each heartbeats once (as ExecuteToolCall does at its start), and
// whether they are local activities.
type FloorInput struct {
	Activities int  `json:"activities"`
	Heartbeat  bool `json:"heartbeat"`
	Local      bool `json:"local"`
}

// BenchFloor runs in.Activities no-op activities one after another.
func BenchFloor(ctx workflow.Context, in FloorInput) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	for i := 0; i < in.Activities; i++ {
		f := workflow.ExecuteActivity(actx, floorActivity, in.Heartbeat)
		if in.Local {
			f = workflow.ExecuteLocalActivity(lctx, floorActivity, in.Heartbeat)
		}
		if err := f.Get(ctx, nil); err != nil {
			return err
		}
	}
	return nil
}

// benchNoop does nothing, or records one heartbeat (the SDK sends a
// first heartbeat at once, synchronously).
func benchNoop(ctx context.Context, heartbeat bool) error {
	if heartbeat {
		activity.RecordHeartbeat(ctx)
	}
	return nil
}

// runLoopWorker is the loop benchmark's worker process: the agent loop with
// every bench scenario's scripted model (provider "faux", model id = the
// scenario name, as conformance.Input names it) and test tools, and the
// floor workflow.
func runLoopWorker(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loopworker", flag.ExitOnError)
	address := fs.String("address", "localhost:7233", "")
	queue := fs.String("queue", "", "")
	statsFile := fs.String("rpc-stats", "", "serve the worker's RPC counts on loopback and write the URL to this file")
	var tune workerTuning
	tune.register(fs)
	_ = fs.Parse(args)
	scenarios, err := loadScenarios()
	if err != nil {
		return err
	}
	rpcs := newRPCCounter()
	c, err := client.Dial(client.Options{HostPort: *address, Logger: quiet(), ConnectionOptions: client.ConnectionOptions{
		DialOptions: append(workflows.WorkerDialOptions(), grpc.WithChainUnaryInterceptor(rpcs.interceptor())),
	}})
	if err != nil {
		return err
	}
	defer c.Close()
	if *statsFile != "" {
		if err := rpcs.serve(*statsFile); err != nil {
			return err
		}
	}

	scripted := llm.NewScriptedProvider()
	ts := tools.NewRegistry()
	specs := map[string][]byte{}
	for _, s := range scenarios {
		scripted.Add(s.Name, llm.Script{Responses: s.Model})
		// conformance.ToolRegistry builds the scenario's test tools; one
		// worker serves every scenario, so a tool name must mean the same
		// tool in all of them.
		reg := conformance.ToolRegistry(s.Scenario)
		for _, spec := range s.Tools {
			b, _ := json.Marshal(spec)
			if prev, ok := specs[spec.Name]; ok && string(prev) != string(b) {
				return fmt.Errorf("tool %s differs between scenarios; give it another name", spec.Name)
			}
			specs[spec.Name] = b
			t, _ := reg.Get(spec.Name)
			ts.Register(t)
		}
	}
	models := llm.NewRegistry()
	models.Register(conformance.ModelProvider, scripted)
	opts := workflows.WorkerOptions()
	tune.apply(&opts)
	w, err := agentworker.New(agentworker.Options{Client: c, Store: benchStore(), TaskQueue: *queue, Models: models, Tools: ts, WorkerOptions: &opts})
	if err != nil {
		return err
	}
	w.Workers[0].RegisterWorkflowWithOptions(BenchFloor, workflow.RegisterOptions{Name: floorWorkflow})
	w.Workers[0].RegisterActivityWithOptions(benchNoop, activity.RegisterOptions{Name: floorActivity})
	return w.Run(worker.InterruptCh())
}
