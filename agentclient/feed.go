package agentclient

import (
	"context"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// historyFeed says when a run records something that may have added events
// to its log, so that a watcher reads the log (a Query, which is billed and
// reaches a worker) only then. The log lives in workflow memory and changes
// only when workflow code runs: in a workflow task, whose completion is
// recorded, or when the run closes. The feed long-polls the run's history
// (GetWorkflowExecutionHistory with WaitNewEvent), which the server answers
// when the run records something or after its long-poll timeout (20 s by
// default, history.longPollExpirationInterval): an idle session costs its
// watcher one request per timeout and no Query.
//
// It reads the run's whole history once when it starts: the server has no
// way to start a long poll at the end. The completed workflow tasks it
// reads poke news (coalesce says when), which holds one poke, so a
// catch-up costs the watcher one Query however long the history.
type historyFeed struct {
	runID string // as Watch asked for it: "" is the latest run
	news  chan struct{}
	// excerpts are the log's events that ModelTurn inputs and memo
	// upserts where the run rests carry (agentapi.LogExcerpt), in history
	// order; a read that brings them needs no Query.
	excerpts chan []agent.Event
	dc       converter.DataConverter
	cancel   context.CancelFunc
	done     chan struct{}

	mu     sync.Mutex
	err    error
	closed enumspb.EventType // the run's close event; 0 while it runs
}

func startFeed(ctx context.Context, c client.Client, workflowID, runID string, dc converter.DataConverter) *historyFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &historyFeed{runID: runID, news: make(chan struct{}, 1), excerpts: make(chan []agent.Event, 16), dc: dc,
		cancel: cancel, done: make(chan struct{})}
	evs := make(chan *historypb.HistoryEvent, 256)
	go f.coalesce(ctx, evs)
	go func() {
		defer close(f.done)
		it := c.GetWorkflowHistory(ctx, workflowID, runID, true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				f.finish(err, 0)
				return
			}
			switch t := ev.GetEventType(); t {
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				f.finish(nil, t)
				return
			}
			select {
			case evs <- ev:
			case <-ctx.Done():
				f.finish(ctx.Err(), 0)
				return
			}
		}
		// The iterator ends only after the close event or an error.
		f.finish(nil, enumspb.EVENT_TYPE_UNSPECIFIED)
	}()
	return f
}

// NewsDelay is how long a watcher may wait, after a workflow task added
// events to the log, for the workflow to reach a point where reading the
// log (one Query) shows a whole step: see coalesce.
var NewsDelay = 300 * time.Millisecond

// coalesce pokes news for the workflow tasks the history records, so that
// a watcher reads the log about once per turn rather than once per
// workflow task (each Query is a billable action). A turn of an agent
// loop has two places where the run rests: its model turn running, and its
// tools running. The first shows the watcher a streaming message (whose
// deltas it can match only once it read the message's message_start), so
// a completed workflow task that scheduled a ModelTurn activity, with no
// other workflow task on the way, pokes at once; so does one after which
// no tool runs (the run waits for a person, a prompt or a timer:
// nothing will come soon to share the Query with). Other news (tools
// started, a tool finished while others run) pokes at most NewsDelay
// later, and sooner if the run reaches one of those points meanwhile: a
// turn whose tools end quickly costs one Query, and a long one shows its
// tools starting NewsDelay late.
//
// It judges from the events it has: an event it has not read yet (the
// rest of a page) can make it poke early, which costs a Query, never an
// event (every read returns all the events after the last one read).
//
// A model turn scheduled while someone watched the one before carries the
// log's events since then in its input (agentapi.LogExcerpt): those go to
// excerpts, and that point pokes no Query. So does a run that rests (a
// call waits for approval, a session's prompt ended) after a memo upsert
// that carried them (agentapi.MemoLogExcerpt), unless the log grew after
// it in the same workflow task: nothing would bring those events but the
// Query. The workflow says so with a later upsert of agentapi.MemoLogGrew
// in that task (a coroutine the task woke logged, or a handler); builds
// from before that mark are covered by the older rule that a task which
// ran an Update's or a Signal's handler is read with the Query.
func (f *historyFeed) coalesce(ctx context.Context, evs <-chan *historypb.HistoryEvent) {
	var (
		news     bool               // a workflow task completed since the last poke
		pending  bool               // a workflow task is scheduled and has not completed
		model    bool               // the last completed workflow task scheduled a model turn
		carried  bool               // ... whose input carried the log's new events
		rested   bool               // the last completed workflow task carried them in its memo
		handled  bool               // ... and ran an Update's or a Signal's handler
		signaled bool               // a Signal came since the last workflow task completed
		tools    = map[int64]bool{} // tool activities running, by scheduled event ID
		timer    *time.Timer
		fire     <-chan time.Time
	)
	poke := func() {
		news, fire = false, nil
		if timer != nil {
			timer.Stop()
		}
		f.poke()
	}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-fire:
			poke()
		case ev := <-evs:
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				pending = true
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				news, pending, model, carried, rested = true, false, false, false, false
				// A Signal recorded before the task completed reached it.
				handled, signaled = signaled, false
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
				signaled = true
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
				// Recorded with the task that ran the handler.
				handled = true
			case enumspb.EVENT_TYPE_WORKFLOW_PROPERTIES_MODIFIED:
				memo := ev.GetWorkflowPropertiesModifiedEventAttributes().GetUpsertedMemo()
				switch {
				case f.memoExcerpt(memo):
					rested = true
				case memo.GetFields()[agentapi.MemoLogGrew] != nil:
					// Events after the excerpt: read them. news again, in
					// case the excerpt's rest was already judged.
					rested, news = false, true
				}
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
				pending = false
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				switch ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() {
				case modelActivity:
					model, rested = true, false
					carried = f.excerpt(ev.GetActivityTaskScheduledEventAttributes().GetInput())
				case toolActivity:
					tools[ev.GetEventId()] = true
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				delete(tools, ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId())
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED:
				delete(tools, ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId())
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
				delete(tools, ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId())
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
				delete(tools, ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId())
			}
			if !news || len(evs) > 0 {
				continue
			}
			if !pending && (model && carried || !model && rested && !handled && len(tools) == 0) {
				// Everything since the last model turn came with this one,
				// or with the memo of a run that now rests.
				news, fire = false, nil
				if timer != nil {
					timer.Stop()
				}
				continue
			}
			if !pending && (model || len(tools) == 0) {
				poke()
				continue
			}
			if fire == nil {
				timer = time.NewTimer(NewsDelay)
				fire = timer.C
			}
		}
	}
}

// modelActivity is the activity type of a model turn, toolActivity that
// of a tool call: only news while tools run waits NewsDelay.
const (
	modelActivity = "ModelTurn"
	toolActivity  = "ExecuteToolCall"
)

// excerpt passes on the events a ModelTurn input carries, and says
// whether it did.
func (f *historyFeed) excerpt(input *commonpb.Payloads) bool {
	var ex agentapi.LogExcerpt
	if input == nil || f.dc.FromPayloads(input, &ex) != nil {
		return false
	}
	return f.pass(ex.Events)
}

// memoExcerpt passes on the events a memo upsert carries, and says whether
// it did: the upsert that removes the field again carries none.
func (f *historyFeed) memoExcerpt(memo *commonpb.Memo) bool {
	p := memo.GetFields()[agentapi.MemoLogExcerpt]
	var ex agentapi.LogExcerpt
	if p == nil || f.dc.FromPayload(p, &ex) != nil {
		return false
	}
	return f.pass(ex.Events)
}

// pass hands events to the watcher. A watcher that has not taken the
// earlier ones yet (16) reads the log with a Query instead.
func (f *historyFeed) pass(events []agent.Event) bool {
	if len(events) == 0 {
		return false
	}
	select {
	case f.excerpts <- events:
		return true
	default:
		return false
	}
}

func (f *historyFeed) poke() {
	select {
	case f.news <- struct{}{}:
	default:
	}
}

func (f *historyFeed) finish(err error, closed enumspb.EventType) {
	f.mu.Lock()
	f.err, f.closed = err, closed
	f.mu.Unlock()
	f.poke()
}

// state says whether the run has closed, or the feed stopped on a failure.
func (f *historyFeed) state() (ended bool, err error) {
	select {
	case <-f.done:
	default:
		return false, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err == nil, f.err
}

// continued says whether the run closed by continuing as new.
func (f *historyFeed) continued() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
}

func (f *historyFeed) closeEvent() enumspb.EventType {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

func (f *historyFeed) stop() {
	if f != nil {
		f.cancel()
		<-f.done
	}
}
