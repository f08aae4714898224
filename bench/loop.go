package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/conformance"
	"github.com/durable-agents/agentloop/workflows"
)

// Scenarios the targets name.
const (
	scSeq0      = "loop-10x4-0ms-seq"
	scPar0      = "loop-10x4-0ms-par"
	scSeq100    = "loop-10x4-100ms-seq"
	scPar100    = "loop-10x4-100ms-par"
	scBatch     = "loop-16x500ms"
	scLong      = "loop-200x1-0ms"
	scOneTurn   = "loop-1x0"
	scElevenTxt = "loop-11x0"
)

// loopResult is one scenario's A/B runs.
type loopResult struct {
	s        benchScenario
	pi       []piRun
	ours     []time.Duration
	hist     []histStats
	cpu      []cpuSample
	rpcs     []rpcDelta
	lastHist []*historypb.HistoryEvent
}

func (r *loopResult) piLoop() []time.Duration {
	var d []time.Duration
	for _, p := range r.pi {
		d = append(d, p.loop())
	}
	return d
}

// delta is ours minus pi, medians.
func (r *loopResult) delta() time.Duration { return median(r.ours) - median(r.piLoop()) }

// target is one line of the closing table.
type target struct {
	name, goal, measured string
	pass                 bool
	skipped              bool
}

// benchLoop runs each scenario through pi's own loop (bench/pi, node) and
// through the workflow, alternating, and checks the results against the
// targets.
func benchLoop(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("loop", flag.ExitOnError)
	reps := fs.Int("reps", 5, "A/B repetitions per scenario")
	only := fs.String("only", "", "regexp: run only the scenarios whose names match (targets whose scenarios did not run are skipped)")
	concurrent := fs.Int("concurrent", 200, "runs of "+scPar100+" started at once on the one worker; 0 skips")
	floorRuns := fs.Int("floor-runs", 20, "runs of each floor workflow")
	replays := fs.Int("replays", 5, "replays of a 200-turn history")
	warmup := fs.Int("pi-warmup", 1, "untimed runs of the scenario in each node process before the timed one")
	node := fs.String("node", "node", "node binary")
	var tune workerTuning
	tune.register(fs)
	var serverConfig listFlag
	fs.Var(&serverConfig, "server-config", "KEY=VALUE: dynamic config for the dev server this command starts (repeatable; not with TEMPORAL_ADDRESS)")
	_ = fs.Parse(args)
	filter, err := regexp.Compile(*only)
	if err != nil {
		return err
	}
	began := time.Now()

	all, err := loadScenarios()
	if err != nil {
		return err
	}
	pi, versions, err := newPiRunner(ctx, *node, *warmup)
	if err != nil {
		return err
	}
	statsDir, err := os.MkdirTemp("", "bench-loop-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(statsDir)
	statsFile := filepath.Join(statsDir, "rpc")
	var serverArgs []string
	for _, kv := range serverConfig {
		serverArgs = append(serverArgs, "--dynamic-config-value", kv)
	}
	e, err := setupWorker(ctx, "loopworker", serverArgs, append(tune.args(), "-rpc-stats", statsFile)...)
	if err != nil {
		return err
	}
	defer e.close()
	rpcs, err := waitRPCReader(ctx, statsFile)
	if err != nil {
		return err
	}

	meter := cpuMeter{server: listenerPID(e.address), worker: e.worker.Process.Pid, client: os.Getpid()}
	b := &loopBench{ctx: ctx, e: e, meter: meter, rpcs: rpcs, pi: pi, all: all,
		reps: *reps, floorRuns: *floorRuns, concurrent: *concurrent, replays: *replays}
	server := "dev server started by this command (internal/harness/devserver, in-memory SQLite, eager activities enabled)"
	if e.srv == nil {
		server = "TEMPORAL_ADDRESS=" + e.address + " (shared: its CPU time includes other clients' work)"
	} else if len(serverConfig) > 0 {
		server += " plus " + strings.Join(serverConfig, ", ")
	}
	fmt.Printf("command:  go run ./bench loop %s\n", strings.Join(args, " "))
	fmt.Printf("machine:  %s, %s, %s/%s, GOMAXPROCS %d\n", machine(), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Printf("load:     %s (at start)\n", loadavg())
	fmt.Printf("pi:       %s (bench/pi/loop.mjs, one node process per run, %d warm-up run(s) in-process before the timed one)\n", versions, *warmup)
	fmt.Printf("ours:     workflow AgentLoop on %s; worker: a separate process, %s\n", server, tune)
	fmt.Printf("timing:   pi from the runAgentLoop call to its resolution, in-process (node startup excluded, reported below);\n")
	fmt.Printf("          ours from ExecuteWorkflow to the result of run.Get, in this process (history fetched after, untimed)\n")
	fmt.Printf("cpu:      CPU time from /proc of the server (pid %d), the worker (pid %d) and this client (pid %d) over each of our runs;\n", meter.server, meter.worker, meter.client)
	fmt.Printf("          pi's is the node process's over its timed run\n\n")

	if err := b.warmUp(); err != nil {
		return err
	}
	b.measureIdle()
	if err := b.measureFloors(); err != nil {
		return err
	}
	if err := b.runAB(filter); err != nil {
		return err
	}
	targets := b.derivedTargets()
	targets = append(targets, b.batchTarget())
	b.printWhereTheTimeGoes()
	ct, pt, err := b.concurrentTargets()
	if err != nil {
		return err
	}
	rt, err := b.replayTarget()
	if err != nil {
		return err
	}
	printTargets(append(targets, ct, pt, rt))
	fmt.Printf("\nload:     %s (at end); whole command %.0f s\n", loadavg(), time.Since(began).Seconds())
	return nil
}

func find(all []benchScenario, name string) benchScenario {
	for _, s := range all {
		if s.Name == name {
			return s
		}
	}
	panic("no scenario " + name)
}

// runOurs runs a scenario through the workflow and times it from
// ExecuteWorkflow to the result.
func runOurs(ctx context.Context, e *env, s benchScenario, tag string) (time.Duration, client.WorkflowRun, error) {
	in := conformance.Input(s.Scenario)
	in.EventOrderWindow = "" // what users get, not the conformance runner's longer hold
	t0 := time.Now()
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        fmt.Sprintf("%s-%s-%s", s.Name, e.queue, tag),
		TaskQueue: e.queue,
	}, agentapi.AgentLoopWorkflow, in)
	if err != nil {
		return 0, nil, err
	}
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		return 0, nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	d := time.Since(t0)
	calls := 0
	for _, m := range res.Messages {
		if m.Role == agent.RoleToolResult {
			calls++
		}
	}
	if res.Turns != s.turns || calls != s.calls || res.StopReason != agent.StopReasonStop {
		return d, run, fmt.Errorf("%s: %d turns, %d tool results, stop reason %s; the scenario has %d turns and %d tool calls",
			s.Name, res.Turns, calls, res.StopReason, s.turns, s.calls)
	}
	return d, run, nil
}

func runFloor(ctx context.Context, e *env, in FloorInput, tag string) (time.Duration, error) {
	d, _, err := runFloorRun(ctx, e, in, tag)
	return d, err
}

func runFloorRun(ctx context.Context, e *env, in FloorInput, tag string) (time.Duration, client.WorkflowRun, error) {
	t0 := time.Now()
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        fmt.Sprintf("floor-%s-%s", e.queue, tag),
		TaskQueue: e.queue,
	}, floorWorkflow, in)
	if err != nil {
		return 0, nil, err
	}
	if err := run.Get(ctx, nil); err != nil {
		return 0, nil, err
	}
	return time.Since(t0), run, nil
}

// runConcurrent starts n runs of a scenario at once.
func runConcurrent(ctx context.Context, e *env, s benchScenario, n int) ([]time.Duration, int, time.Duration) {
	return runMany(ctx, n, 5*time.Minute, func(ctx context.Context, tag string) (time.Duration, error) {
		d, _, err := runOurs(ctx, e, s, tag)
		if err != nil {
			return 0, fmt.Errorf("concurrent run: %w", err)
		}
		return d, nil
	})
}

// runConcurrentFloor starts n floor runs at once.
func runConcurrentFloor(ctx context.Context, e *env, n int) ([]time.Duration, int, time.Duration) {
	return runMany(ctx, n, 2*time.Minute, func(ctx context.Context, tag string) (time.Duration, error) {
		d, err := runFloor(ctx, e, FloorInput{Activities: 1}, tag)
		if err != nil {
			return 0, fmt.Errorf("concurrent floor run: %w", err)
		}
		return d, nil
	})
}

// runMany calls run n times at once and returns the times of the calls that
// succeeded, how many failed (the first three are reported), and the wall
// time until the last ended.
func runMany(ctx context.Context, n int, timeout time.Duration, run func(ctx context.Context, tag string) (time.Duration, error)) ([]time.Duration, int, time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var mu sync.Mutex
	var durs []time.Duration
	failed := 0
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := run(ctx, fmt.Sprintf("concurrent-%d", i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				if failed <= 3 {
					fmt.Fprintf(os.Stderr, "bench: %v\n", err)
				}
				return
			}
			durs = append(durs, d)
		}()
	}
	wg.Wait()
	return durs, failed, time.Since(t0)
}

// replay replays a history n times with a fresh replayer each time.
func replay(evs []*historypb.HistoryEvent, n int) ([]time.Duration, error) {
	h := &historypb.History{Events: evs}
	var times []time.Duration
	for i := 0; i < n; i++ {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions(workflows.AgentLoop, workflow.RegisterOptions{Name: agentapi.AgentLoopWorkflow})
		t0 := time.Now()
		if err := r.ReplayWorkflowHistory(quiet(), h); err != nil {
			return nil, err
		}
		times = append(times, time.Since(t0))
	}
	return times, nil
}

func printAB(order []*loopResult) {
	fmt.Printf("A/B, alternating (pi first in odd repetitions, ours first in even ones); ms, median [min – max]:\n")
	fmt.Printf("  %-20s %5s %5s  %-26s %-28s %9s %9s  %s\n", "scenario", "turns", "calls", "pi", "ours", "ours/pi", "ours−pi", "history per run: events / bytes / workflow tasks / activities / markers / timers")
	for _, r := range order {
		p := r.piLoop()
		h := r.hist[len(r.hist)-1]
		same := true
		for _, x := range r.hist {
			same = same && x.events == h.events && x.wfts == h.wfts
		}
		note := ""
		if !same {
			note = fmt.Sprintf(" (varies: events %v)", histEvents(r.hist))
		}
		fmt.Printf("  %-20s %5d %5d  %-26s %-28s %8.1fx %9.1f  %d / %d / %d / %d / %d / %d%s\n", r.s.Name, r.s.turns, r.s.calls,
			spread(p, 2), spread(r.ours, 1), float64(median(r.ours))/float64(median(p)), ms(r.delta()),
			h.events, h.bytes, h.wfts, h.activities, h.markers, h.timers, note)
	}
	fmt.Printf("\n  CPU time per run (mean): pi's node process over the timed run; ours: server + worker + client processes\n")
	for _, r := range order {
		var piCPU time.Duration
		for _, p := range r.pi {
			piCPU += msDuration(p.CPUMs)
		}
		fmt.Printf("  %-20s pi %7.1f ms   ours %s\n", r.s.Name, ms(piCPU)/float64(len(r.pi)), meanCPU(r.cpu))
	}
	fmt.Printf("\n  the worker's RPCs to the server per run (mean, counted as they return; this client adds 2: the start and the result's long poll)\n")
	var all []rpcDelta
	for _, r := range order {
		fmt.Printf("  %-20s %s\n", r.s.Name, rpcLine(meanRPC(r.rpcs)))
		all = append(all, r.rpcs...)
	}
	lat := rpcLatency(all)
	fmt.Printf("  the server's answer time as the worker sees it (mean over all runs above): ")
	var parts []string
	for _, m := range []string{"RespondWorkflowTaskCompleted", "RespondActivityTaskCompleted", "RecordActivityTaskHeartbeat"} {
		if d, ok := lat[m]; ok {
			parts = append(parts, fmt.Sprintf("%s %.2f ms", m, ms(d)))
		}
	}
	fmt.Printf("%s\n", strings.Join(parts, ", "))
	fmt.Printf("\n  pi, not in the timing above:\n")
	fmt.Printf("  %-20s %-24s %-24s %-24s\n", "scenario", "node startup to ready", "node process wall", "cold run (first in process)")
	for _, r := range order {
		var start, wall, cold []time.Duration
		for _, p := range r.pi {
			start = append(start, msDuration(p.StartupMs))
			wall = append(wall, p.process)
			cold = append(cold, msDuration(p.ColdMs))
		}
		fmt.Printf("  %-20s %-24s %-24s %-24s\n", r.s.Name, spread(start, 0), spread(wall, 0), spread(cold, 1))
	}
}

func histEvents(h []histStats) []int {
	var out []int
	for _, x := range h {
		out = append(out, x.events)
	}
	return out
}

func spread(d []time.Duration, prec int) string {
	return fmt.Sprintf("%.*f [%.*f – %.*f]", prec, ms(median(d)), prec, ms(quantile(d, 0)), prec, ms(quantile(d, 1)))
}

func ratioTarget(r *loopResult, name string, limit float64) target {
	if r == nil {
		return target{name: "10x4/100ms " + name[len(name)-3:] + ": ours/pi", goal: fmt.Sprintf("≤ %.2f", limit), skipped: true}
	}
	ratio := float64(median(r.ours)) / float64(median(r.piLoop()))
	return target{
		name:     "10x4/100ms " + r.s.Name[len(r.s.Name)-3:] + ": ours/pi",
		goal:     fmt.Sprintf("≤ %.2f", limit),
		measured: fmt.Sprintf("%.3f (%.0f / %.0f ms)", ratio, ms(median(r.ours)), ms(median(r.piLoop()))),
		pass:     ratio <= limit,
	}
}

// derivePerTurn is the orchestration cost of one model turn: the 11-turn
// and 1-turn text-only runs differ by 10 model turns and nothing else.
func derivePerTurn(rs map[string]*loopResult) (time.Duration, bool) {
	a, b := rs[scElevenTxt], rs[scOneTurn]
	if a == nil || b == nil {
		return 0, false
	}
	return (a.delta() - b.delta()) / 10, true
}

// derivePerCall is the orchestration cost of one tool call: the 10x4 run and
// the 11-turn text-only run both make 11 model calls; the 10x4 run adds 40
// tool calls.
func derivePerCall(rs map[string]*loopResult, name string) (time.Duration, bool) {
	a, b := rs[name], rs[scElevenTxt]
	if a == nil || b == nil {
		return 0, false
	}
	return (a.delta() - b.delta()) / time.Duration(a.s.calls), true
}

// batchSpan is, in a one-batch history, the time from the first
// ExecuteToolCall scheduled to the completion of the workflow task that
// handled the last tool result.
func batchSpan(evs []*historypb.HistoryEvent) (time.Duration, bool) {
	t := newTiming(evs)
	calls := t.scheduled("ExecuteToolCall")
	if len(calls) == 0 {
		return 0, false
	}
	start := evs[calls[0]].GetEventTime().AsTime()
	lastDone := -1
	for i, ev := range evs {
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && t.actType[a.GetScheduledEventId()] == "ExecuteToolCall" {
			lastDone = i
		}
	}
	for i := lastDone; i >= 0 && i < len(evs); i++ {
		if evs[i].GetWorkflowTaskCompletedEventAttributes() != nil {
			return evs[i].GetEventTime().AsTime().Sub(start), true
		}
	}
	return 0, false
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return "loadavg " + strings.TrimSpace(string(b))
}

func meanCPU(cs []cpuSample) cpuSample {
	var t cpuSample
	for _, c := range cs {
		t = t.add(c)
	}
	return t.div(len(cs))
}

// listFlag is a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }
