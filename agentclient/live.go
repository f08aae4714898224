package agentclient

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/activities"
	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/store"
	"github.com/durable-agents/agentloop/workflows"
)

// LivePollInterval is how often Watch reads the live stream of a model turn
// and the live progress of running tools.
var LivePollInterval = 50 * time.Millisecond

// WatchOptions configure Watch.
type WatchOptions struct {
	// After skips events up to this sequence number.
	After int64
	// Live adds message_update events, the deltas of the model turn that is
	// streaming, and tool_execution_update events, the latest partial
	// result of each running tool, read from their activities' heartbeat
	// details. They carry Seq 0, an Attempt and the Time the worker saw
	// them; they are never part of the durable log, which keeps its own,
	// sparser tool_execution_update events.
	Live bool
	// DataConverter decodes heartbeat details; it must match the worker's
	// (default: Temporal's default converter).
	DataConverter converter.DataConverter
	// RetryFor is how long a read that keeps failing transiently (server
	// restarting, worker being replaced) is retried before Watch gives up;
	// zero means DefaultRetryFor.
	RetryFor time.Duration
	// Store, when set, resolves the stubs events carry for large content
	// (tool output, long answers) from the content store the workers use;
	// without it events come as the workflow holds them.
	Store store.Blobs
}

// Watch calls fn for every event of a run, as Follow does, and with Live
// also for the live deltas of each model turn between its message_start and
// message_end, and for the new partial results of each tool call between
// its tool_execution_start and tool_execution_end.
func Watch(ctx context.Context, c client.Client, workflowID, runID string, o WatchOptions, fn func(agent.Event)) error {
	dc := o.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	w := watcher{after: o.After}
	for {
		page, err := w.readPage(ctx, c, dc, workflowID, runID, o, fn)
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
			if o.Store != nil {
				if e, err = resolveEvent(ctx, o.Store, e, o.RetryFor); err != nil {
					return err
				}
			}
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
		if o.Live && w.streaming {
			continue
		}
		if o.Live && len(w.tools) > 0 {
			// While tools run, the log still moves (other calls end,
			// approvals are asked for): read it every PollInterval and the
			// tools' heartbeat details every LivePollInterval in between.
			if err := w.pollTools(ctx, c, dc, workflowID, runID, o.RetryFor, fn); err != nil {
				return err
			}
			continue
		}
		if err := sleep(ctx, PollInterval); err != nil {
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

type watcher struct {
	after     int64
	turn      int  // turn_start events seen
	streaming bool // an assistant message_start without its message_end
	attempt   int32
	liveSeq   int64
	// tools are the calls with a tool_execution_start and no
	// tool_execution_end yet, by tool call id.
	tools map[string]*runningTool
}

// runningTool is a running call and the last live partial result
// delivered: its activity, attempt and sequence number.
type runningTool struct {
	name     string
	args     map[string]any
	activity string
	attempt  int32
	seq      int64
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
	case agent.EventToolExecutionStart:
		if w.tools == nil {
			w.tools = map[string]*runningTool{}
		}
		w.tools[e.ToolCallID] = &runningTool{name: e.ToolName, args: e.Args}
	case agent.EventToolExecutionEnd:
		delete(w.tools, e.ToolCallID)
	case agent.EventAgentEnd:
		w.tools = nil
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

// readPage reads the events after w.after. While tools run (with Live),
// the running tools' heartbeat details are read every LivePollInterval
// until the page comes: the events Query needs the workflow's worker, and
// on a loaded machine it sometimes waits seconds for one (the server's
// 5 s timeout for a sticky queue nobody polls), while the server answers
// DescribeWorkflowExecution alone.
func (w *watcher) readPage(ctx context.Context, c client.Client, dc converter.DataConverter, workflowID, runID string, o WatchOptions, fn func(agent.Event)) (workflows.EventsPage, error) {
	if !o.Live || len(w.tools) == 0 {
		return eventsPage(ctx, c, workflowID, runID, w.after, o.RetryFor)
	}
	type read struct {
		page workflows.EventsPage
		err  error
	}
	done := make(chan read, 1)
	after := w.after
	go func() {
		page, err := eventsPage(ctx, c, workflowID, runID, after, o.RetryFor)
		done <- read{page, err}
	}()
	t := time.NewTicker(LivePollInterval)
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.page, r.err
		case <-t.C:
			err := retry(ctx, o.RetryFor, func() error {
				return w.liveTools(ctx, c, dc, workflowID, runID, fn)
			})
			if err != nil {
				return workflows.EventsPage{}, err
			}
		}
	}
}

// pollTools reads the running tools' heartbeat details every
// LivePollInterval for PollInterval, when the log is due to be read again.
func (w *watcher) pollTools(ctx context.Context, c client.Client, dc converter.DataConverter, workflowID, runID string, retryFor time.Duration, fn func(agent.Event)) error {
	until := time.Now().Add(PollInterval)
	for {
		err := retry(ctx, retryFor, func() error {
			return w.liveTools(ctx, c, dc, workflowID, runID, fn)
		})
		if err != nil {
			return err
		}
		left := time.Until(until)
		if left <= 0 {
			return nil
		}
		if err := sleep(ctx, min(left, LivePollInterval)); err != nil {
			return err
		}
	}
}

// liveTools delivers the partial results of running calls not seen yet:
// the latest of each, from the heartbeat details of its ExecuteToolCall
// activity. Partial results of an attempt older than one already seen are
// stale (Temporal retried the tool) and dropped.
func (w *watcher) liveTools(ctx context.Context, c client.Client, dc converter.DataConverter, workflowID, runID string, fn func(agent.Event)) error {
	desc, err := c.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return fmt.Errorf("describe %s: %w", workflowID, err)
	}
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "ExecuteToolCall" || pa.GetHeartbeatDetails() == nil {
			continue
		}
		var p activities.ToolProgress
		if err := dc.FromPayloads(pa.GetHeartbeatDetails(), &p); err != nil || p.Partial == nil {
			continue
		}
		call := w.tools[p.ToolCallID]
		if call == nil {
			continue
		}
		if pa.GetActivityId() != call.activity {
			// The workflow ran the call again (after an abort): a new count.
			call.activity, call.attempt, call.seq = pa.GetActivityId(), p.Attempt, 0
		}
		if p.Attempt < call.attempt {
			continue
		}
		if p.Attempt > call.attempt {
			call.attempt, call.seq = p.Attempt, 0
		}
		if p.Seq <= call.seq {
			continue
		}
		call.seq = p.Seq
		fn(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: p.ToolCallID, ToolName: call.name,
			Args: call.args, PartialResult: p.Partial, Attempt: p.Attempt, Time: p.At})
	}
	return nil
}
