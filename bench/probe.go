package main

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/llm"
)

// The alternative the streaming benchmark compares with: the model-turn
// activity sends its deltas to the workflow as signals (batched every
// StreamInterval) and clients poll a query. It is measured, not used: the
// signals put every delta into history.

const (
	probeSignal = "deltas"
	probeQuery  = "deltas"
)

// StreamProbe runs one streamed model call whose deltas arrive as signals.
func StreamProbe(ctx workflow.Context) error {
	var events []agentapi.LiveEvent
	ch := workflow.GetSignalChannel(ctx, probeSignal)
	if err := workflow.SetQueryHandler(ctx, probeQuery, func(after int64) ([]agentapi.LiveEvent, error) {
		var out []agentapi.LiveEvent
		for _, e := range events {
			if e.Seq > after {
				out = append(out, e)
			}
		}
		return out, nil
	}); err != nil {
		return err
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute})
	f := workflow.ExecuteActivity(actx, (*probeActivities).ProbeStream)
	for !f.IsReady() {
		s := workflow.NewSelector(ctx)
		s.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) {
			var batch []agentapi.LiveEvent
			c.Receive(ctx, &batch)
			events = append(events, batch...)
		})
		s.AddFuture(f, func(workflow.Future) {})
		s.Select(ctx)
	}
	return f.Get(ctx, nil)
}

type probeActivities struct {
	c     client.Client
	model *llm.ScriptedProvider
}

// ProbeStream streams the stream script, signalling new deltas at most
// every StreamInterval.
func (p *probeActivities) ProbeStream(ctx context.Context) error {
	info := activity.GetInfo(ctx)
	m, err := p.model.Model("stream")
	if err != nil {
		return err
	}
	var mu sync.Mutex
	var pending []agentapi.LiveEvent
	var seq int64
	done := make(chan struct{})
	flushed := make(chan struct{})
	go func() {
		defer close(flushed)
		t := time.NewTicker(agentapi.StreamInterval)
		defer t.Stop()
		for {
			stop := false
			select {
			case <-t.C:
			case <-done:
				stop = true
			}
			mu.Lock()
			batch := pending
			pending = nil
			mu.Unlock()
			if len(batch) > 0 {
				_ = p.c.SignalWorkflow(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID, probeSignal, batch)
			}
			if stop {
				return
			}
		}
	}()
	_, err = m.Stream(ctx, llm.Request{}, func(e agent.StreamEvent) {
		e.Partial, e.Message, e.Error = nil, nil, nil
		mu.Lock()
		seq++
		pending = append(pending, agentapi.LiveEvent{Seq: seq, At: time.Now().UnixMilli(), Event: e})
		mu.Unlock()
	})
	close(done)
	<-flushed
	return err
}
