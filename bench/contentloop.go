package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// benchLoopTurns is one AgentLoop run whose model calls bash turns times
// before it answers, on the real worker; it continues as new when the
// server suggests it. One watcher reads the whole stream across the runs.
func benchLoopTurns(ctx context.Context, e *contentEnv, turns int) (bool, error) {
	queue := fmt.Sprintf("content-loop-%d", time.Now().UnixNano())
	w, err := e.startRealWorker(ctx, queue)
	if err != nil {
		return false, err
	}
	defer w.stop()
	id := queue
	start := time.Now()
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, agentapi.AgentLoopWorkflow,
		agentapi.AgentLoopInput{LoopConfig: contentConfig(fmt.Sprintf("%s%d", contentLoopPref, turns)),
			Prompt: "Run echo once a turn until you have counted every turn."})
	if err != nil {
		return false, err
	}
	var seen, gaps, calls int64
	var end *agent.Event
	watched := make(chan error, 1)
	go func() {
		watched <- agentclient.Watch(ctx, e.c, id, run.GetRunID(), agentclient.WatchOptions{Store: e.st}, func(ev agent.Event) {
			seen++
			if ev.Seq != seen {
				gaps++
			}
			if ev.Type == agent.EventToolExecutionEnd {
				if calls++; calls%250 == 0 {
					progressf("%d bash calls seen, event %d", calls, ev.Seq)
				}
			}
			if ev.Type == agent.EventAgentEnd {
				end = &ev
			}
		})
	}()
	select {
	case err := <-watched:
		if err != nil {
			return false, fmt.Errorf("watch of %s: %w", id, err)
		}
	case <-w.done:
		return false, fmt.Errorf("%s: %w", id, w.exited())
	}
	wall := time.Since(start)
	var res agentapi.AgentLoopResult
	if err := e.c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
		return false, fmt.Errorf("result of %s: %w", id, err)
	}
	ch, err := measureChain(ctx, e.c, id)
	if err != nil {
		return false, err
	}
	want := 1 + 2*turns + 1
	held := 0
	if end != nil {
		held = len(end.Messages)
	}
	line("run", "%s on task queue %s (real worker binary)", id, queue)
	line("turns", "%d (%d bash calls, then the answer)", res.Turns, turns)
	line("wall time", "%v", wall.Round(time.Second))
	printChain(ch)
	line("stopReason", "%s", res.StopReason)
	order := fmt.Sprintf("gap-free 1..%d", seen)
	if gaps > 0 {
		order = fmt.Sprintf("with %d out of place", gaps)
	}
	line("stream", "%d events, sequence numbers %s", seen, order)
	line("agent_end messages", "%d of %d (prompt, %d x assistant and tool result, answer)", held, want, turns)
	ok := verdict(res.StopReason == agent.StopReasonStop, "ends with stopReason stop (%s)", res.StopReason)
	ok = verdict(gaps == 0 && seen > 0, "the stream is gap-free (%d events)", seen) && ok
	ok = verdict(held == want, "agent_end holds every message (%d of %d)", held, want) && ok
	ok = verdict(ch.failed == 0, "no workflow task failure (%d)", ch.failed) && ok
	return ok, nil
}
