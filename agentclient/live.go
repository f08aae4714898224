package agentclient

import (
	"context"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// LivePollInterval is the shortest wait between two reads of the live
// progress of running tools (DescribeWorkflowExecution, which the server
// answers alone and does not bill), and the wait between two reads of a
// streaming model turn while its next heartbeat is not known to be due
// (beatClock); reads that bring nothing lengthen it up to LivePollMax.
var LivePollInterval = 50 * time.Millisecond

// WatchOptions configure Watch.
type WatchOptions struct {
	// After skips events up to this sequence number.
	After int64
	// Turn is the run's turn count at After (the state Query's turn when
	// After is its lastEvent): the live deltas of a model turn are matched
	// to it by number, and a watch from After counts turn_start events
	// only from there. Zero fits a watch from the run's start.
	Turn int
	// Resume, with Live and After, says that After may fall in the middle
	// of a run (a chat coming back to a session that works): Watch first
	// reads the run's log up to After, without delivering it, to learn
	// whether a model turn streams and which tools run there, so that
	// their live deltas and partial results show. Without it a watch from
	// After shows live only what starts after After (a watch from a
	// prompt's own start needs no more).
	Resume bool
	// Live adds message_update events, the deltas of the model turn that is
	// streaming, and tool_execution_update events, the latest partial
	// result of each running tool, read from their activities' heartbeat
	// details. They carry Seq 0, an Attempt and the Time the worker saw
	// them; they are never part of the durable log, which keeps its own,
	// sparser tool_execution_update events. A worker streams deltas only
	// while someone holds the workflow's watch lease, which Watch does
	// with Live and a Store that keeps leases (*store.Store); without one
	// the deltas come at the worker's liveness pace (every 10 s).
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
//
// It reads the event log (the events Query) only when the run has recorded
// something new, which it learns from a long poll of the run's history
// (historyFeed): watching a run that waits costs one request per long-poll
// timeout and no Query. With Live and Store, it holds the workflow's watch
// lease, so that the worker streams deltas (see activities/stream.go).
func Watch(ctx context.Context, c client.Client, workflowID, runID string, o WatchOptions, fn func(agent.Event)) error {
	dc := o.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.Live {
		holdLease(ctx, o.Store, workflowID)
	}
	w := watcher{after: o.After, dc: dc, turn: o.Turn}
	defer func() { w.feed.stop() }()
	if o.Live && o.Resume && o.After > 0 {
		if err := w.prime(ctx, c, workflowID, runID, o.RetryFor); err != nil {
			return err
		}
	}
	for {
		if err := ctx.Err(); err != nil {
			// The caller gave up (fn may have cancelled ctx): say so as
			// it is, not as a failed read.
			return err
		}
		page, err := w.readPage(ctx, c, workflowID, runID, o, fn)
		if err != nil {
			return err
		}
		if page.First > w.after+1 && page.PreviousRunID != "" {
			// The events we still need are in an earlier run.
			runID = page.PreviousRunID
			continue
		}
		if err := w.deliver(ctx, o, page.Events, fn); err != nil {
			return err
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
		err = retry(ctx, o.RetryFor, func() error {
			return w.waitForNews(ctx, c, workflowID, runID, o, fn)
		})
		if err != nil {
			return err
		}
	}
}

// deliver hands the events after w.after to fn, their stubs resolved when
// there is a Store.
func (w *watcher) deliver(ctx context.Context, o WatchOptions, events []agent.Event, fn func(agent.Event)) error {
	for _, e := range events {
		if e.Seq <= w.after {
			continue
		}
		w.durable(e)
		if o.Store != nil {
			var err error
			if e, err = resolveEvent(ctx, o.Store, e, o.RetryFor); err != nil {
				return err
			}
		}
		fn(e)
	}
	return nil
}

// waitForNews returns when the run may have new events the log must be
// read for: its feed saw a workflow task complete, or the run close. Events
// the history itself brings (a model turn's input carries the log's new
// events while someone watches) it delivers and waits on. Meanwhile, with
// Live, it reads the streaming model turn's and the running tools'
// heartbeat details, at the pace of livePace.
func (w *watcher) waitForNews(ctx context.Context, c client.Client, workflowID, runID string, o WatchOptions, fn func(agent.Event)) error {
	if w.feed != nil && w.feed.runID == runID {
		ended, err := w.feed.state()
		switch {
		case err != nil:
			// Start again (retry calls back after a transient failure).
			w.feed.stop()
			w.feed = nil
		case ended && (runID != "" || !w.feed.continued()):
			if w.endRead {
				return final{fmt.Errorf("run of %s closed (%s) before its event log ended",
					workflowID, w.feed.closeEvent())}
			}
			// One more read: the log as the run left it.
			w.endRead = true
			return nil
		case ended:
			// The latest run continued as new: follow the next one.
			w.feed.stop()
			w.feed = nil
		}
	}
	if w.feed == nil || w.feed.runID != runID {
		w.feed.stop()
		w.feed, w.endRead = startFeed(ctx, c, workflowID, runID, w.dc), false
	}
	var tick <-chan time.Time
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	// poll keeps a live read coming while a model turn streams or tools
	// run, and none once they stopped: events the history brings (an
	// excerpt up to agent_end) can end them while this waits.
	poll := func() {
		live := o.Live && (w.streaming || len(w.tools) > 0)
		switch {
		case live && t == nil:
			t = time.NewTimer(w.liveWait())
			tick = t.C
		case !live && t != nil:
			t.Stop()
			t, tick = nil, nil
		}
	}
	poll()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.feed.news:
			if _, err := w.feed.state(); err != nil {
				if ctx.Err() != nil {
					// The feed's long poll failed because ctx ended (a
					// gRPC Canceled status, not ctx's error): say so as
					// the ctx.Done case would have, had select picked it.
					return ctx.Err()
				}
				return fmt.Errorf("history of %s: %w", workflowID, err)
			}
			return nil
		case events := <-w.feed.excerpts:
			if len(events) == 0 || events[0].Seq > w.after+1 {
				return nil // events before these are still to be read
			}
			if err := w.deliver(ctx, o, events, fn); err != nil {
				return err
			}
			poll()
		case <-tick:
			if err := w.liveRead(ctx, c, workflowID, runID, fn); err != nil {
				return err
			}
			t, tick = nil, nil
			poll()
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
	dc        converter.DataConverter
	after     int64
	turn      int  // turn_start events seen
	streaming bool // an assistant message_start without its message_end
	model     liveModel
	// tools are the calls with a tool_execution_start and no
	// tool_execution_end yet, by tool call id.
	tools map[string]*runningTool
	// feed follows the history of the run being read; endRead is set once
	// the log was read again after the run closed.
	feed    *historyFeed
	endRead bool
	// pace is the wait between live reads: short while they bring
	// something, longer while they do not.
	pace livePace
	// beats phase-locks the reads of a streaming model turn to its
	// heartbeats.
	beats beatClock
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
			w.streaming, w.model = true, liveModel{}
			w.beats.newTurn()
			w.pace = newPace(time.Now()) // the first deltas show soon
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
		w.pace = newPace(time.Now()) // the first partial result shows soon
	case agent.EventToolExecutionEnd:
		delete(w.tools, e.ToolCallID)
	case agent.EventAgentEnd:
		w.tools = nil
	}
}

// prime learns, without delivering them, from the events up to w.after
// what is going on there: a model turn streaming, tools running. A watch
// that starts after the run's start (a chat coming back to a session) then
// shows their live deltas and partial results as a watch from the start
// does. It reads the log of the run being watched only: a run that
// continued as new starts with nothing streaming or running.
func (w *watcher) prime(ctx context.Context, c client.Client, workflowID, runID string, retryFor time.Duration) error {
	upTo, turn := w.after, w.turn
	w.after = 0
	defer func() { w.after, w.turn = upTo, turn }()
	for w.after < upTo {
		page, err := eventsPage(ctx, c, workflowID, runID, w.after, retryFor)
		if err != nil {
			return err
		}
		if len(page.Events) == 0 {
			return nil
		}
		for _, e := range page.Events {
			if e.Seq > upTo {
				return nil
			}
			w.durable(e)
		}
	}
	return nil
}

// liveWait is the wait before the next live read: just after the next
// heartbeat is due while a model turn streams (its deltas come every 250 ms
// and are due on screen within 300 ms, see bench stream; streamWait), and
// the pace of what the reads bring while only tools run (a tool may run
// silently for minutes).
func (w *watcher) liveWait() time.Duration {
	if w.streaming {
		return streamWait(&w.beats, &w.pace, time.Now())
	}
	return w.pace.next()
}

// liveRead delivers what the heartbeat details of the streaming model turn
// and of the running tools bring that was not delivered yet, and paces the
// next read by whether there was any.
func (w *watcher) liveRead(ctx context.Context, c client.Client, workflowID, runID string, fn func(agent.Event)) error {
	start := time.Now()
	desc, err := c.DescribeWorkflow(ctx, workflowID, runID)
	if err != nil {
		return fmt.Errorf("describe %s: %w", workflowID, err)
	}
	brought := false
	deliver := fn
	fn = func(e agent.Event) {
		brought = true
		deliver(e)
	}
	defer func() { w.pace.read(brought, time.Now()) }()
	var beat time.Time // the streaming turn's last heartbeat, server time
	for _, pa := range desc.RawResponse.GetPendingActivities() {
		if pa.GetHeartbeatDetails() == nil {
			continue
		}
		switch pa.GetActivityType().GetName() {
		case modelActivity:
			var p agentapi.LiveProgress
			if !w.streaming || w.dc.FromPayloads(pa.GetHeartbeatDetails(), &p) != nil || p.Turn != w.turn {
				continue
			}
			if at := pa.GetLastHeartbeatTime(); at != nil {
				beat = at.AsTime()
			}
			for _, e := range w.model.beat(p) {
				fn(e)
			}
		case "ExecuteToolCall":
			w.liveTool(pa.GetActivityId(), pa.GetHeartbeatDetails(), fn)
		}
	}
	if w.streaming {
		w.beats.saw(beat, start, time.Now())
	}
	return nil
}

// readPage reads the events after w.after. While tools run (with Live),
// the running tools' heartbeat details are read, at the pace of livePace,
// until the page comes: the events Query needs the workflow's worker, and
// on a loaded machine it sometimes waits seconds for one (the server's
// 5 s timeout for a sticky queue nobody polls), while the server answers
// DescribeWorkflowExecution alone.
func (w *watcher) readPage(ctx context.Context, c client.Client, workflowID, runID string, o WatchOptions, fn func(agent.Event)) (agentapi.EventsPage, error) {
	if !o.Live || len(w.tools) == 0 {
		return eventsPage(ctx, c, workflowID, runID, w.after, o.RetryFor)
	}
	type read struct {
		page agentapi.EventsPage
		err  error
	}
	done := make(chan read, 1)
	after := w.after
	go func() {
		page, err := eventsPage(ctx, c, workflowID, runID, after, o.RetryFor)
		done <- read{page, err}
	}()
	t := time.NewTimer(w.liveWait())
	defer t.Stop()
	for {
		select {
		case r := <-done:
			return r.page, r.err
		case <-t.C:
			err := retry(ctx, o.RetryFor, func() error {
				return w.liveRead(ctx, c, workflowID, runID, fn)
			})
			if err != nil {
				return agentapi.EventsPage{}, err
			}
			t.Reset(w.liveWait())
		}
	}
}

// liveTool delivers a running call's partial result if it is new: the
// latest of the call, from the heartbeat details of its ExecuteToolCall
// activity. Partial results of an attempt older than one already seen are
// stale (Temporal retried the tool) and dropped.
func (w *watcher) liveTool(activityID string, details *commonpb.Payloads, fn func(agent.Event)) {
	var p agentapi.ToolProgress
	if err := w.dc.FromPayloads(details, &p); err != nil || p.Partial == nil {
		return
	}
	call := w.tools[p.ToolCallID]
	if call == nil {
		return
	}
	if activityID != call.activity {
		// The workflow ran the call again (after an abort): a new count.
		call.activity, call.attempt, call.seq = activityID, p.Attempt, 0
	}
	if p.Attempt < call.attempt {
		return
	}
	if p.Attempt > call.attempt {
		call.attempt, call.seq = p.Attempt, 0
	}
	if p.Seq <= call.seq {
		return
	}
	call.seq = p.Seq
	fn(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: p.ToolCallID, ToolName: call.name,
		Args: call.args, PartialResult: p.Partial, Attempt: p.Attempt, Time: p.At})
}
