package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/tools"
)

// benchCost prints what each scenario costs in Temporal Cloud's billable
// actions, by the categories of its documentation, and the requests that
// load the server without being billed, beside a plain workflow with one
// activity per step (the floor). Heartbeats, Queries, Updates and the
// unbilled reads are counted from the dev server's own request metrics
// (service_requests of its frontend); workflow starts, activities, timers,
// signals and search-attribute upserts from history.
func benchCost(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("cost", flag.ExitOnError)
	idle := fs.Duration("idle", time.Minute, "how long the idle scenarios wait; figures are scaled to an hour")
	prompts := fs.Int("prompts", 20, "prompts of the session scenario")
	only := fs.String("only", "", "run only the scenarios whose name contains this text")
	_ = fs.Parse(args)

	// Counting needs the server's metrics: always a dev server of our own.
	srv, err := devserver.Start(ctx, devserver.Options{Metrics: true})
	if err != nil {
		return err
	}
	defer func() { _ = srv.Stop() }()
	r := &costBench{srv: srv, c: srv.Client(), st: benchStore(), queue: fmt.Sprintf("cost-%d", time.Now().UnixNano())}
	stop, err := r.startWorker(*prompts)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("machine: %s\n", machine())
	fmt.Printf("cost: a dev server's request metrics and histories; worker in this process; idle scenarios %v, scaled to an hour\n\n", *idle)

	type scenario struct {
		name string
		run  func(context.Context) (costFigures, error)
	}
	scenarios := []scenario{
		{"10x4 run (10 turns of 4 parallel 100 ms tools), watched", func(ctx context.Context) (costFigures, error) { return r.loop(ctx, true) }},
		{"10x4 run, nobody watching (client waits for the result)", func(ctx context.Context) (costFigures, error) { return r.loop(ctx, false) }},
		{"  floor: 51 activities, 10 of them followed by 4 in parallel", func(ctx context.Context) (costFigures, error) {
			return r.floor(ctx, costFloorInput{Turns: 10, Parallel: 4, Tool: 100 * time.Millisecond})
		}},
		{"10 s streamed turn (100 chunks/s), watched", func(ctx context.Context) (costFigures, error) { return r.stream(ctx, true) }},
		{"10 s streamed turn (100 chunks/s), nobody watching", func(ctx context.Context) (costFigures, error) { return r.stream(ctx, false) }},
		{"  floor: one 10 s activity", func(ctx context.Context) (costFigures, error) {
			return r.floor(ctx, costFloorInput{Model: 10 * time.Second})
		}},
		{"30 s bash call (sleep 30), nobody watching", func(ctx context.Context) (costFigures, error) { return r.bash(ctx, false) }},
		{"30 s bash call (sleep 30), watched", func(ctx context.Context) (costFigures, error) { return r.bash(ctx, true) }},
		{"  floor: one 30 s activity", func(ctx context.Context) (costFigures, error) {
			return r.floor(ctx, costFloorInput{Model: 30 * time.Second})
		}},
		{"idle session, watched (per hour)", func(ctx context.Context) (costFigures, error) { return r.idle(ctx, *idle, true) }},
		{"idle session, nobody watching (per hour)", func(ctx context.Context) (costFigures, error) { return r.idle(ctx, *idle, false) }},
		{"  floor: a waiting workflow, its history long-polled (per hour)", func(ctx context.Context) (costFigures, error) { return r.idleFloor(ctx, *idle) }},
		{fmt.Sprintf("%d-prompt session, each a tool call approved by a person, watched", *prompts), func(ctx context.Context) (costFigures, error) { return r.session(ctx, *prompts) }},
		{fmt.Sprintf("  floor: %d x (Update, activity, Update, 2 activities)", *prompts), func(ctx context.Context) (costFigures, error) { return r.floor(ctx, costFloorInput{Prompts: *prompts}) }},
	}
	fmt.Printf("%-68s %8s %8s %9s %6s %5s %6s %5s %8s   %8s %8s %8s\n", "scenario", "workflow", "activity", "heartbeat",
		"signal", "query", "update", "timer", "billable", "Describe", "history", "requests")
	var measured []namedFigures
	for _, s := range scenarios {
		if !strings.Contains(s.name, *only) {
			continue
		}
		f, err := s.run(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(s.name), err)
		}
		measured = append(measured, namedFigures{s.name, f})
		fmt.Printf("%-68s %8.0f %8.0f %9.0f %6.0f %5.0f %6.0f %5.0f %8.0f   %8.0f %8.0f %8.0f\n", s.name, f.workflow, f.activity,
			f.heartbeat, f.signal, f.query, f.update, f.timer, f.billable(), f.describe, f.history, f.requests)
	}
	fmt.Printf("\nbillable: the sum of the action categories (Temporal Cloud, about $50 per million). Describe: DescribeWorkflowExecution;\n" +
		"history: GetWorkflowExecutionHistory and its long polls. Neither is billed; each is a read of the run's state in the server.\n" +
		"requests: every request to the server but the workers' long polls for tasks (which a worker makes whatever it runs).\n")
	printLoad(measured)
	return nil
}

// costFigures are one scenario's billable actions by category and its
// unbilled reads.
type costFigures struct {
	workflow, activity, heartbeat, signal, query, update, timer float64
	describe, history, requests                                 float64
	window                                                      time.Duration // between the two reads of the counts
	// ops are the requests by operation, the workers' task polls left
	// out; seconds is how long the scenario ran (its counts are over that
	// time, which scale stretches with them).
	ops     devserver.Requests
	seconds float64
}

func (f costFigures) billable() float64 {
	return f.workflow + f.activity + f.heartbeat + f.signal + f.query + f.update + f.timer
}

func (f costFigures) scale(k float64) costFigures {
	ops := devserver.Requests{}
	for op, n := range f.ops {
		ops[op] = n * k
	}
	return costFigures{f.workflow * k, f.activity * k, f.heartbeat * k, f.signal * k, f.query * k, f.update * k,
		f.timer * k, f.describe * k, f.history * k, f.requests * k, f.window, ops, f.seconds * k}
}

type costBench struct {
	srv   *devserver.Server
	c     client.Client
	st    *store.Store
	queue string
}

// The scripted models of the scenarios.
const (
	costStreamChunks = 1000
	costStreamDelay  = 10 * time.Millisecond
)

func (r *costBench) startWorker(prompts int) (func(), error) {
	scripted := llm.NewScriptedProvider()
	var loop []llm.ScriptedResponse
	for turn := range 10 {
		var calls []agent.Content
		for i := range 4 {
			calls = append(calls, agent.ToolCall(fmt.Sprintf("c%d-%d", turn, i), "sleep", map[string]any{}))
		}
		loop = append(loop, llm.ScriptedResponse{Content: calls})
	}
	loop = append(loop, llm.ScriptedResponse{Content: []agent.Content{agent.Text("done")}})
	scripted.Add("loop", llm.Script{Responses: loop})
	scripted.Add("stream", llm.Script{ChunkDelay: costStreamDelay, Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.Text(strings.Repeat("streaming token ", costStreamChunks))}}}})
	var session []llm.ScriptedResponse
	for i := range prompts + 1 {
		session = append(session,
			llm.ScriptedResponse{Content: []agent.Content{agent.ToolCall(fmt.Sprintf("s%d", i), "sleep", map[string]any{})}},
			llm.ScriptedResponse{Content: []agent.Content{agent.Text("Done.")}})
	}
	scripted.Add("session", llm.Script{Responses: session})
	scripted.Add("bash", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.ToolCall("b1", "bash", map[string]any{"command": "sleep 30"})}},
		{Content: []agent.Content{agent.Text("done")}}}})
	models := llm.NewRegistry()
	models.Register("bench", scripted)
	sleepTool := tools.FuncTool{Def: tools.Definition{Name: "sleep", Description: "sleeps 100 ms"},
		Fn: func(ctx context.Context, _ tools.Call) (agent.ToolResult, error) {
			time.Sleep(100 * time.Millisecond)
			return agent.TextResult("slept"), nil
		}}
	outDir, err := os.MkdirTemp("", "agentloop-bench-cost-")
	if err != nil {
		return nil, err
	}
	bash := tools.NewBashTool(tools.BashOptions{OutputDir: outDir})
	w, err := agentworker.New(agentworker.Options{Client: r.c, Store: r.st, TaskQueue: r.queue, Models: models,
		Tools: tools.NewRegistry(sleepTool, bash), DefaultWorkspace: outDir})
	if err != nil {
		return nil, err
	}
	w.Workers[0].RegisterWorkflow(CostFloor)
	w.Workers[0].RegisterActivity(floorStep)
	if err := w.Start(); err != nil {
		return nil, err
	}
	return func() { w.Stop(); _ = os.RemoveAll(outDir) }, nil
}

func (r *costBench) model(id string) agent.LoopConfig {
	return agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: id}, Tools: []string{"sleep"}}
}

// measure runs fn and counts what it cost: the server's request counts
// before and after (read once they settle: the server publishes its
// counters about once a second) and the histories of workflowID's runs.
func (r *costBench) measure(ctx context.Context, workflowID string, fn func() error) (costFigures, error) {
	time.Sleep(1500 * time.Millisecond)
	before, err := r.srv.Requests(ctx, "default")
	if err != nil {
		return costFigures{}, err
	}
	t0 := time.Now()
	if err := fn(); err != nil {
		return costFigures{}, err
	}
	ran := time.Since(t0)
	time.Sleep(1500 * time.Millisecond)
	after, err := r.srv.Requests(ctx, "default")
	if err != nil {
		return costFigures{}, err
	}
	req := after.Sub(before)
	f := costFigures{
		heartbeat: req.Sum("RecordActivityTaskHeartbeat", "RecordActivityTaskHeartbeatById"),
		query:     req.Sum("QueryWorkflow"),
		update:    req.Sum("UpdateWorkflowExecution"),
		describe:  req.Sum("DescribeWorkflowExecution"),
		history:   req.Sum("GetWorkflowExecutionHistory", "PollWorkflowExecutionHistory"),
		requests:  req.Sum() - req.Sum(workerPolls...),
		window:    time.Since(t0),
		ops:       devserver.Requests{},
		seconds:   ran.Seconds(),
	}
	for op, n := range req {
		if !slices.Contains(workerPolls, op) {
			f.ops[op] = n
		}
	}
	if err := r.countHistory(ctx, workflowID, &f); err != nil {
		return costFigures{}, err
	}
	return f, nil
}

// workerPolls are what a worker asks whether or not it runs anything: its
// long polls for tasks.
var workerPolls = []string{"PollWorkflowTaskQueue", "PollActivityTaskQueue", "PollNexusTaskQueue", "RecordWorkerHeartbeat", "ShutdownWorker"}

// countHistory adds the actions history shows for every run of a workflow
// id: starts (continue-as-new included), search-attribute upserts,
// activity attempts, local activities (those of one workflow task are one
// action), timers and signals.
func (r *costBench) countHistory(ctx context.Context, workflowID string, f *costFigures) error {
	runID := ""
	for {
		iter := r.c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		next := ""
		localInTask := false
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				return err
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
				f.workflow++
				if prev := ev.GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); prev != "" && runID == "" {
					next = prev
				}
			case enumspb.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
				if !onlyChangeVersion(ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes()) {
					f.workflow++
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				f.activity += float64(ev.GetActivityTaskStartedEventAttributes().GetAttempt())
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" && !localInTask {
					f.activity++
					localInTask = true
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				localInTask = false
			case enumspb.EVENT_TYPE_TIMER_STARTED:
				f.timer++
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED, enumspb.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
				f.signal++
			}
		}
		if next == "" {
			return nil
		}
		runID = next
	}
}

// onlyChangeVersion says whether an upsert sets only TemporalChangeVersion,
// which workflow.GetVersion upserts with its marker: Temporal Cloud does not
// count it ("The TemporalChangeVersion Search Attribute, used for Workflow
// versioning, is also exempt from Action counting", docs.temporal.io/cloud/actions).
func onlyChangeVersion(sa *commonpb.SearchAttributes) bool {
	fields := sa.GetIndexedFields()
	_, ok := fields["TemporalChangeVersion"]
	return ok && len(fields) == 1
}

func (r *costBench) loop(ctx context.Context, watched bool) (costFigures, error) {
	id := fmt.Sprintf("cost-loop-%d", time.Now().UnixNano())
	cfg := r.model("loop")
	cfg.ToolExecution = agent.ExecutionParallel
	return r.measure(ctx, id, func() error {
		run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, agentapi.AgentLoopWorkflow,
			agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "go"})
		if err != nil {
			return err
		}
		if !watched {
			return run.Get(ctx, nil)
		}
		return agentclient.Watch(ctx, r.c, id, run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(agent.Event) {})
	})
}

func (r *costBench) stream(ctx context.Context, watched bool) (costFigures, error) {
	id := fmt.Sprintf("cost-stream-%d", time.Now().UnixNano())
	return r.measure(ctx, id, func() error {
		run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, agentapi.AgentLoopWorkflow,
			agentapi.AgentLoopInput{LoopConfig: r.model("stream"), Prompt: "go"})
		if err != nil {
			return err
		}
		if !watched {
			return run.Get(ctx, nil)
		}
		return agentclient.Watch(ctx, r.c, id, run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(agent.Event) {})
	})
}

// bash runs one bash call of 30 s (sleep 30, no output), watched live or
// with nobody watching (the client waits for the result).
func (r *costBench) bash(ctx context.Context, watched bool) (costFigures, error) {
	id := fmt.Sprintf("cost-bash-%d", time.Now().UnixNano())
	cfg := r.model("bash")
	cfg.Tools = []string{"bash"}
	return r.measure(ctx, id, func() error {
		run, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, agentapi.AgentLoopWorkflow,
			agentapi.AgentLoopInput{LoopConfig: cfg, Prompt: "go"})
		if err != nil {
			return err
		}
		if watched {
			if err := agentclient.Watch(ctx, r.c, id, run.GetRunID(), agentclient.WatchOptions{Live: true, Store: r.st}, func(agent.Event) {}); err != nil {
				return err
			}
		}
		var res agentapi.AgentLoopResult
		if err := run.Get(ctx, &res); err != nil {
			return err
		}
		// The figures mean something only if the command ran its 30 s.
		for _, m := range res.Messages {
			if m.Role == agent.RoleToolResult && m.IsError {
				return fmt.Errorf("the bash call failed: %v", m.Content)
			}
		}
		return nil
	})
}

// idle measures a session that has answered one prompt and waits for the
// next, for d, scaled to an hour: with a live watcher, or with nobody.
func (r *costBench) idle(ctx context.Context, d time.Duration, watched bool) (costFigures, error) {
	id := fmt.Sprintf("cost-idle-%d", time.Now().UnixNano())
	cfg := r.model("session")
	cfg.Tools = nil
	if _, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: cfg}); err != nil {
		return costFigures{}, err
	}
	defer func() { _ = r.c.TerminateWorkflow(context.Background(), id, "", "bench over") }()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ended := make(chan struct{}, 1)
	if watched {
		go func() {
			_ = agentclient.Watch(wctx, r.c, id, "", agentclient.WatchOptions{Live: true, Store: r.st}, func(e agent.Event) {
				if e.Type == agent.EventAgentEnd {
					ended <- struct{}{}
				}
			})
		}()
	}
	var st agentapi.RunStatus
	if err := agentclient.Update(ctx, r.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "hi"}, &st); err != nil {
		return costFigures{}, err
	}
	if watched {
		<-ended
	} else if err := waitIdle(ctx, r.c, id); err != nil {
		return costFigures{}, err
	}
	f, err := r.measure(ctx, id, func() error { return sleep(ctx, d) })
	if err != nil {
		return costFigures{}, err
	}
	// History holds the prompt's run, which is not the idle hour's.
	f.workflow, f.activity, f.timer, f.signal = 0, 0, 0, 0
	return f.scale(float64(time.Hour) / float64(f.window)), nil
}

// waitIdle waits until a session's run has ended.
func waitIdle(ctx context.Context, c client.Client, id string) error {
	for {
		st, err := agentclient.State(ctx, c, id)
		if err == nil && st.Status == agentapi.StatusIdle {
			return nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// session runs prompts prompts through one session, each a tool call that
// a person approves, with one live watcher on the whole session, as
// `starter session chat` does.
func (r *costBench) session(ctx context.Context, prompts int) (costFigures, error) {
	id := fmt.Sprintf("cost-session-%d", time.Now().UnixNano())
	cfg := r.model("session")
	cfg.Approval = &agent.ApprovalPolicy{Tools: []string{"sleep"}}
	return r.measure(ctx, id, func() error {
		if _, err := r.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: r.queue}, agentapi.SessionWorkflow,
			agentapi.SessionInput{LoopConfig: cfg}); err != nil {
			return err
		}
		defer func() { _ = r.c.TerminateWorkflow(context.Background(), id, "", "bench over") }()
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		asks := make(chan string, prompts)
		ends := make(chan struct{}, prompts)
		watchErr := make(chan error, 1)
		go func() {
			watchErr <- agentclient.Watch(wctx, r.c, id, "", agentclient.WatchOptions{Live: true, Store: r.st}, func(e agent.Event) {
				switch e.Type {
				case agent.EventApprovalRequest:
					asks <- e.ToolCallID
				case agent.EventAgentEnd:
					ends <- struct{}{}
				}
			})
		}()
		for i := range prompts {
			var st agentapi.RunStatus
			if err := agentclient.Update(ctx, r.c, id, agentapi.UpdatePrompt, agentapi.PromptRequest{Text: fmt.Sprintf("prompt %d", i)}, &st); err != nil {
				return err
			}
			var call string
			select {
			case call = <-asks:
			case err := <-watchErr:
				return fmt.Errorf("watch ended: %v", err)
			}
			if err := agentclient.Update(ctx, r.c, id, agentapi.UpdateApprove, agentapi.ApproveRequest{ToolCallID: call, Decision: "allow"}, nil); err != nil {
				return err
			}
			<-ends
		}
		return nil
	})
}
