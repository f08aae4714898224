package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// benchSession measures the two ways a session can run each prompt's agent
// loop: inline in the session workflow (what AgentSession does) and as a
// child AgentLoop workflow per prompt, which must be given the transcript
// as its input. Same prompts, same scripted model and tool; it prints each
// prompt's latency (prompt sent to agent_end seen) and the history both
// leave behind.
func benchSession(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("session", flag.ExitOnError)
	prompts := fs.Int("prompts", 30, "prompts per session")
	_ = fs.Parse(args)
	e, err := setup(ctx)
	if err != nil {
		return err
	}
	defer e.close()
	fmt.Printf("machine: %s\n%d prompts, each one model turn with a tool call and 1 KiB of tool output, then an answer\n\n", machine(), *prompts)

	inline, inlineHist, err := sessionInline(ctx, e, *prompts)
	if err != nil {
		return fmt.Errorf("inline: %w", err)
	}
	child, childHist, err := sessionChild(ctx, e, *prompts)
	if err != nil {
		return fmt.Errorf("child: %w", err)
	}
	fmt.Printf("%-26s %10s %10s %10s %18s\n", "design", "p50", "p90", "max", "history")
	printPrompts("inline (AgentSession)", inline, inlineHist)
	printPrompts("child AgentLoop per prompt", child, childHist)
	return nil
}

func printPrompts(name string, d []time.Duration, h historySize) {
	slices.Sort(d)
	q := func(p float64) time.Duration { return d[min(len(d)-1, int(p*float64(len(d))))].Round(time.Millisecond) }
	fmt.Printf("%-26s %10v %10v %10v %6d ev %7.1f KB\n", name, q(0.5), q(0.9), q(1), h.events, float64(h.bytes)/1024)
}

func benchConfig() agent.LoopConfig {
	return agent.LoopConfig{Model: agent.ModelRef{Provider: "bench", ID: "session"}, Tools: []string{"echo"}}
}

func sessionInline(ctx context.Context, e *env, n int) ([]time.Duration, historySize, error) {
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: benchConfig()})
	if err != nil {
		return nil, historySize{}, err
	}
	defer func() { _ = e.c.TerminateWorkflow(ctx, run.GetID(), "", "bench over") }()
	var lat []time.Duration
	for i := 0; i < n; i++ {
		start := time.Now()
		var st agentapi.RunStatus
		if err := agentclient.Update(ctx, e.c, run.GetID(), agentapi.UpdatePrompt, agentapi.PromptRequest{Text: "next"}, &st); err != nil {
			return nil, historySize{}, err
		}
		wctx, cancel := context.WithCancel(ctx)
		err := agentclient.Watch(wctx, e.c, run.GetID(), "", agentclient.WatchOptions{After: st.After}, func(ev agent.Event) {
			if ev.Type == agent.EventAgentEnd {
				cancel()
			}
		})
		cancel()
		if wctx.Err() == nil && err != nil {
			return nil, historySize{}, err
		}
		lat = append(lat, time.Since(start))
	}
	h, err := sizeOf(ctx, e.c, run.GetID(), "")
	return lat, h, err
}

// ChildSession is the alternative design, for this measurement only: each
// prompt starts an AgentLoop child with the transcript so far.
func ChildSession(ctx workflow.Context, prompts int) error {
	var transcript []agent.Message
	ch := workflow.GetSignalChannel(ctx, "prompt")
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{})
	for i := 0; i < prompts; i++ {
		var text string
		ch.Receive(ctx, &text)
		var res agentapi.AgentLoopResult
		err := workflow.ExecuteChildWorkflow(cctx, agentapi.AgentLoopWorkflow, agentapi.AgentLoopInput{
			LoopConfig: benchConfig(), Messages: transcript, Prompt: text,
		}).Get(ctx, &res)
		if err != nil {
			return err
		}
		transcript = append(transcript, res.Messages...)
	}
	return nil
}

func sessionChild(ctx context.Context, e *env, n int) ([]time.Duration, historySize, error) {
	run, err := e.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{TaskQueue: e.queue}, ChildSession, n)
	if err != nil {
		return nil, historySize{}, err
	}
	var lat []time.Duration
	var children []string
	for i := 0; i < n; i++ {
		start := time.Now()
		if err := e.c.SignalWorkflow(ctx, run.GetID(), "", "prompt", "next"); err != nil {
			return nil, historySize{}, err
		}
		// The prompt is done when the i-th child has completed.
		for {
			h, err := history(ctx, e.c, run.GetID(), "")
			if err != nil {
				return nil, historySize{}, err
			}
			done := 0
			for _, ev := range h {
				if a := ev.GetChildWorkflowExecutionCompletedEventAttributes(); a != nil {
					done++
					if done > len(children) {
						children = append(children, a.GetWorkflowExecution().GetWorkflowId())
					}
				}
			}
			if done > i {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		lat = append(lat, time.Since(start))
	}
	if err := run.Get(ctx, nil); err != nil {
		return nil, historySize{}, err
	}
	total, err := sizeOf(ctx, e.c, run.GetID(), "")
	if err != nil {
		return nil, historySize{}, err
	}
	for _, id := range children {
		h, err := sizeOf(ctx, e.c, id, "")
		if err != nil {
			return nil, historySize{}, err
		}
		total.events += h.events
		total.bytes += h.bytes
	}
	return lat, total, nil
}
