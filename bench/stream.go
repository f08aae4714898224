package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// benchStream measures how long a model's stream delta takes from the worker
// to a watching client, for the mechanism the project uses (heartbeat
// details read with DescribeWorkflowExecution) and for the alternative
// (signals to the workflow, read with a query), and what each adds to
// history.
func benchStream(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("stream", flag.ExitOnError)
	runs := fs.Int("runs", 3, "streamed model calls per mechanism")
	_ = fs.Parse(args)
	benchStoreDir() // before the worker starts, which inherits it: the watcher's lease must be where the worker reads it
	e, err := setup(ctx)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Printf("machine: %s\n", machine())
	fmt.Printf("stream: %d deltas of 16 characters, one per %v, %d runs per mechanism; client reads just after each heartbeat, every %v while one is late\n\n",
		streamChunks, streamDelay, *runs, agentclient.LivePollInterval)

	var hb, sig []time.Duration
	var hbHist, sigHist historySize
	for i := 0; i < *runs; i++ {
		lat, h, err := streamByHeartbeat(ctx, e)
		if err != nil {
			return fmt.Errorf("heartbeat run: %w", err)
		}
		hb, hbHist = append(hb, lat...), h
		lat, h, err = streamBySignals(ctx, e)
		if err != nil {
			return fmt.Errorf("signal run: %w", err)
		}
		sig, sigHist = append(sig, lat...), h
	}
	fmt.Printf("%-34s %8s %8s %8s %8s %8s %14s\n", "mechanism", "deltas", "p50", "p95", "p99", "max", "history/run")
	printLatency("heartbeat details + Describe (used)", hb, hbHist)
	printLatency("signals + query (alternative)", sig, sigHist)
	p99 := quantile(hb, 0.99)
	verdict := "PASS"
	if p99 > streamDelayBudget {
		verdict = "FAIL"
	}
	fmt.Printf("\n%s: heartbeat p99 %v <= %v (heartbeats at most every %v while watched)\n", verdict, p99, streamDelayBudget, agentapi.StreamInterval)
	return nil
}

// streamDelayBudget is issue 16's: deltas reach a watcher within 300 ms
// p99 at no more than 4 heartbeats a second. Waiting for the next of 4
// heartbeats a second alone is up to 250 ms.
const streamDelayBudget = 300 * time.Millisecond

type historySize struct{ events, bytes int }

func printLatency(name string, d []time.Duration, h historySize) {
	slices.Sort(d)
	q := func(p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[min(len(d)-1, int(p*float64(len(d))))]
	}
	fmt.Printf("%-34s %8d %8v %8v %8v %8v %6d ev %5.1f KB\n", name, len(d), q(0.5), q(0.95), q(0.99), q(1),
		h.events, float64(h.bytes)/1024)
}

func streamByHeartbeat(ctx context.Context, e *env) ([]time.Duration, historySize, error) {
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, agentapi.AgentLoopWorkflow,
		agentapi.AgentLoopInput{LoopConfig: agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: "stream"}}, Prompt: "go"})
	if err != nil {
		return nil, historySize{}, err
	}
	var lat []time.Duration
	err = agentclient.Watch(ctx, e.c, run.GetID(), run.GetRunID(), agentclient.WatchOptions{Live: true, Store: benchStore()}, func(ev agent.Event) {
		if ev.Type == agent.EventMessageUpdate && ev.Time != 0 && ev.AssistantMessageEvent.Type == agent.StreamTextDelta {
			lat = append(lat, time.Since(time.UnixMilli(ev.Time)))
			if os.Getenv("BENCH_DEBUG") != "" {
				fmt.Printf("delta %d latency %v\n", len(lat), lat[len(lat)-1])
			}
		}
	})
	if err != nil {
		return nil, historySize{}, err
	}
	h, err := sizeOf(ctx, e.c, run.GetID(), run.GetRunID())
	return lat, h, err
}

func streamBySignals(ctx context.Context, e *env) ([]time.Duration, historySize, error) {
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, StreamProbe)
	if err != nil {
		return nil, historySize{}, err
	}
	var lat []time.Duration
	var after int64
	done := make(chan error, 1)
	go func() { done <- run.Get(ctx, nil) }()
	for finished := false; !finished; {
		select {
		case err := <-done:
			if err != nil {
				return nil, historySize{}, err
			}
			finished = true
		case <-time.After(agentclient.LivePollInterval):
		}
		resp, err := e.c.QueryWorkflow(ctx, run.GetID(), run.GetRunID(), probeQuery, after)
		if err != nil {
			return nil, historySize{}, err
		}
		var events []agentapi.LiveEvent
		if err := resp.Get(&events); err != nil {
			return nil, historySize{}, err
		}
		for _, le := range events {
			if le.Event.Type == agent.StreamTextDelta {
				lat = append(lat, time.Since(time.UnixMilli(le.At)))
			}
			after = le.Seq
		}
	}
	h, err := sizeOf(ctx, e.c, run.GetID(), run.GetRunID())
	return lat, h, err
}

// sizeOf counts a run's history events and their encoded bytes.
func sizeOf(ctx context.Context, c client.Client, id, runID string) (historySize, error) {
	iter := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var h historySize
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return h, err
		}
		h.events++
		h.bytes += proto.Size(ev)
	}
	return h, nil
}
