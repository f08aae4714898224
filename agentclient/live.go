package agentclient

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
)

// LivePollInterval is how often Watch reads the live stream of a model turn.
var LivePollInterval = 50 * time.Millisecond

// WatchOptions configure Watch.
type WatchOptions struct {
	// After skips events up to this sequence number.
	After int64
	// Live adds message_update events: the deltas of the model turn that is
	// streaming, read from its heartbeat details. They carry Seq 0 and an
	// Attempt; they are never part of the durable log.
	Live bool
	// DataConverter decodes heartbeat details; it must match the worker's
	// (default: Temporal's default converter).
	DataConverter converter.DataConverter
	// RetryFor is how long a read that keeps failing transiently (server
	// restarting, worker being replaced) is retried before Watch gives up;
	// zero means DefaultRetryFor.
	RetryFor time.Duration
}

// Watch calls fn for every event of a run, as Follow does, and with Live
// also for the live deltas of each model turn between its message_start and
// message_end.
func Watch(ctx context.Context, c client.Client, workflowID, runID string, o WatchOptions, fn func(agent.Event)) error {
	dc := o.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	w := watcher{after: o.After}
	for {
		page, err := eventsPage(ctx, c, workflowID, runID, w.after, o.RetryFor)
		if err != nil {
			return err
		}
		if page.First > w.after+1 && page.PreviousRunID != "" {
			// The events we still need are in an earlier run.
			runID = page.PreviousRunID
			continue
		}
		for _, e := range page.Events {
			w.durable(e)
			fn(e)
		}
		if page.Done && w.after >= page.Last {
			if !page.ContinuedAsNew {
				return nil
			}
			// A session continued as new: its log goes on in the latest run.
			runID = ""
			continue
		}
		if len(page.Events) > 0 && w.after < page.Last {
			continue
		}
		// While a model turn streams, only its heartbeat details change:
		// read them with DescribeWorkflowExecution, which the server answers
		// alone, and query the event log again when the turn is over.
		for o.Live && w.streaming {
			var pending bool
			err := retry(ctx, o.RetryFor, func() (err error) {
				pending, err = w.live(ctx, c, dc, workflowID, runID, fn)
				return err
			})
			if err != nil {
				return err
			}
			if !pending {
				break
			}
			if err := sleep(ctx, LivePollInterval); err != nil {
				return err
			}
		}
		if !(o.Live && w.streaming) {
			if err := sleep(ctx, PollInterval); err != nil {
				return err
			}
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

type watcher struct {
	after     int64
	turn      int  // turn_start events seen
	streaming bool // an assistant message_start without its message_end
	attempt   int32
	liveSeq   int64
}

func (w *watcher) durable(e agent.Event) {
	w.after = e.Seq
	switch e.Type {
	case agent.EventTurnStart:
		w.turn++
	case agent.EventMessageStart:
		if e.Message != nil && e.Message.Role == agent.RoleAssistant {
			w.streaming, w.attempt, w.liveSeq = true, 0, 0
		}
	case agent.EventMessageEnd:
		if e.Message != nil && e.Message.Role == agent.RoleAssistant {
			w.streaming = false
		}
	}
}

// live delivers the model turn's stream events not seen yet, and reports
// whether the turn's activity is still pending.
func (w *watcher) live(ctx context.Context, c client.Client, dc converter.DataConverter, workflowID, runID string, fn func(agent.Event)) (pending bool, err error) {
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return false, fmt.Errorf("describe %s: %w", workflowID, err)
	}
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "ModelTurn" {
			continue
		}
		pending = true
		if pa.GetHeartbeatDetails() == nil {
			continue
		}
		var p activities.LiveProgress
		if err := dc.FromPayloads(pa.GetHeartbeatDetails(), &p); err != nil {
			continue
		}
		if p.Turn != w.turn {
			continue
		}
		if p.Attempt != w.attempt {
			w.attempt, w.liveSeq = p.Attempt, 0
		}
		for _, le := range p.Events {
			if le.Seq <= w.liveSeq {
				continue
			}
			ev := le.Event
			fn(agent.Event{Type: agent.EventMessageUpdate, AssistantMessageEvent: &ev, Message: p.Partial, Attempt: p.Attempt, Time: le.At})
			w.liveSeq = le.Seq
		}
	}
	return pending, nil
}
