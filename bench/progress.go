package main

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/agentworker"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/tools"
)

// The progress budget: one bash call printing a 1 KB line every 100 ms for
// -duration keeps its run's history under progressHistoryBudget and its
// progress reaches a live watcher with a p99 delay under
// progressDelayBudget (activities/signals.go, toolprogress.go).
const (
	progressHistoryBudget = 2 << 20
	progressDelayBudget   = 250 * time.Millisecond
)

// benchProgress runs one chatty bash call through a worker process and
// prints what it cost history and how its progress reached a watcher. Run
// with -worker it is that worker process.
func benchProgress(ctx context.Context, args []string) error {
	flags := flag.NewFlagSet("progress", flag.ExitOnError)
	duration := flags.Duration("duration", 10*time.Minute, "how long the command prints (at most 29m)")
	asWorker := flags.Bool("worker", false, "be the benchmark's worker process")
	address := flags.String("address", "localhost:7233", "server address (worker)")
	queue := flags.String("queue", "", "task queue (worker)")
	_ = flags.Parse(args)
	if *duration <= 0 || *duration > tools.MaxBashTimeout-time.Minute {
		return fmt.Errorf("-duration %v: want more than 0 and at most %v", *duration, tools.MaxBashTimeout-time.Minute)
	}
	if *asWorker {
		return runProgressWorker(*address, *queue, *duration)
	}

	// The store's directory is named before the worker starts, which
	// inherits it.
	storeDir := benchStoreDir()
	storeBefore := dirBytes(storeDir)
	e, err := setupWorker(ctx, "progress", nil, "-worker", "-duration", duration.String())
	if err != nil {
		return err
	}
	defer e.close()
	ws, err := os.MkdirTemp("", "agentloop-bench-progress-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	fmt.Printf("machine: %s\n", machine())
	fmt.Printf("progress: one bash call printing a 1 KB line every 100 ms for %v; watcher polls every %v\n\n",
		*duration, agentclient.LivePollInterval)

	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, agentapi.AgentLoopWorkflow,
		agentapi.AgentLoopInput{
			LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: "progress"}, Tools: []string{"bash"}, Workspace: ws},
			Prompt:     "Run the loop.",
		})
	if err != nil {
		return err
	}
	w := progressWatch{}
	if err := agentclient.Watch(ctx, e.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Live: true, Store: benchStore()}, w.see); err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	var res agentapi.AgentLoopResult
	runErr := run.Get(ctx, &res)

	desc, err := e.c.DescribeWorkflow(ctx, run.GetID(), run.GetRunID())
	if err != nil {
		return err
	}
	info := desc.RawResponse.GetWorkflowExecutionInfo()
	events, err := history(ctx, e.c, run.GetID(), run.GetRunID())
	if err != nil {
		return err
	}
	var signals, signalBytes int
	for _, ev := range events {
		if ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName() == agentapi.SignalToolUpdate {
			signals++
			signalBytes += proto.Size(ev)
		}
	}

	status := info.GetStatus().String()
	if runErr == nil {
		status += ", stopReason " + string(res.StopReason)
	} else {
		status += ": " + runErr.Error()
	}
	fmt.Printf("run:              %s\n", status)
	fmt.Printf("history:          %.1f KB, %d events (server's figures; budget %d KB)\n",
		float64(info.GetHistorySizeBytes())/1024, info.GetHistoryLength(), progressHistoryBudget>>10)
	fmt.Printf("toolUpdate:       %d signals, %.1f KB of signal events\n", signals, float64(signalBytes)/1024)
	fmt.Printf("content store:    %.1f KB written (%s)\n", float64(dirBytes(storeDir)-storeBefore)/1024, storeDir)
	w.print()
	if runErr != nil || info.GetHistorySizeBytes() > progressHistoryBudget || w.quantile(0.99) > progressDelayBudget {
		return fmt.Errorf("over budget")
	}
	return nil
}

// progressWatch collects what a live watcher saw of the call.
type progressWatch struct {
	mu         sync.Mutex
	start, end time.Time // the call's start and end, as the watcher saw them
	seen       []time.Time
	delays     []time.Duration
}

func (w *progressWatch) see(e agent.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	switch {
	case e.Type == agent.EventToolExecutionStart:
		w.start = now
	case e.Type == agent.EventToolExecutionEnd:
		w.end = now
	case e.Type == agent.EventToolExecutionUpdate && e.Seq == 0 && e.Time != 0:
		w.seen = append(w.seen, now)
		w.delays = append(w.delays, now.Sub(time.UnixMilli(e.Time)))
	}
}

func (w *progressWatch) quantile(p float64) time.Duration {
	if len(w.delays) == 0 {
		return 0
	}
	d := slices.Sorted(slices.Values(w.delays))
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func (w *progressWatch) print() {
	ran := w.end.Sub(w.start)
	perSecond := map[int]int{}
	gap, last := time.Duration(0), w.start
	for _, t := range append(w.seen, w.end) {
		perSecond[int(t.Sub(w.start)/time.Second)]++
		gap, last = max(gap, t.Sub(last)), t
	}
	fewest := len(w.seen)
	for s := 0; s < int(ran/time.Second); s++ {
		fewest = min(fewest, perSecond[s])
	}
	fmt.Printf("live updates:     %d in %v: %.1f a second, at least %d in every second, longest gap %v\n",
		len(w.seen), ran.Round(time.Millisecond), float64(len(w.seen))/ran.Seconds(), fewest, gap.Round(time.Millisecond))
	fmt.Printf("delay:            p50 %v, p95 %v, p99 %v, max %v (budget p99 %v)\n",
		w.quantile(0.5), w.quantile(0.95), w.quantile(0.99), w.quantile(1), progressDelayBudget)
}

// runProgressWorker is the worker process: the workflow, the bash tool and
// a scripted model whose first turn runs the loop.
func runProgressWorker(address, queue string, d time.Duration) error {
	c, err := client.Dial(client.Options{HostPort: address, Logger: quiet()})
	if err != nil {
		return err
	}
	defer c.Close()
	lines := int(d / tools.BashUpdateInterval)
	command := fmt.Sprintf(`for i in $(seq %d); do printf '%%01000d\n' $i; sleep 0.1; done`, lines)
	// The loop takes longer than its sleeps; the timeout leaves room.
	timeout := min(2*d+time.Minute, tools.MaxBashTimeout)
	scripted := llm.NewScriptedProvider()
	scripted.Add("progress", llm.Script{Responses: []llm.ScriptedResponse{
		{Content: []agent.Content{agent.ToolCall("call_loop", "bash", map[string]any{"command": command, "timeout": timeout.Seconds()})}},
		{Content: []agent.Content{agent.Text("The loop is done.")}},
	}})
	models := llm.NewRegistry()
	models.Register("bench", scripted)
	outDir, err := os.MkdirTemp("", "agentloop-bench-bash-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(outDir)
	bash := tools.NewBashTool(tools.BashOptions{OutputDir: outDir})
	w, err := agentworker.New(agentworker.Options{Client: c, Store: benchStore(), TaskQueue: queue, Models: models, Tools: tools.NewRegistry(bash)})
	if err != nil {
		return err
	}
	return w.Run(worker.InterruptCh())
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
