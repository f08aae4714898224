package activities

import (
	"context"
	"errors"
	"sync"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
)

// Aborts without polling. Temporal tells a running activity that its
// cancellation was requested only in the answer to a heartbeat, so an
// activity that must stop within a second of an abort would heartbeat every
// second: a billable action each, for as long as a build or a model answer
// runs. The workflow records the request in history instead
// (ActivityTaskCancelRequested, written when the abort's workflow task
// completes), and a long poll of the history (GetWorkflowExecutionHistory
// with WaitNewEvent: not billed, answered as soon as the run records
// something, else after the server's long-poll timeout, 20 s by default)
// learns of it within milliseconds. So heartbeats only prove liveness,
// once per half heartbeat timeout while nobody watches.
//
// One feed follows each run that has activities running in this worker
// process, shared by them all (a parallel batch's calls). It long-polls
// only while one of them runs, and keeps its place in the history
// (the page token) for feedKeep after the last one ends, so that the run's
// next activity here (the tools after a model turn, the turn after them)
// goes on from there with one read of what was recorded in between; the
// workflow tasks between two activities wake no poll. The server cannot
// start a long poll at the end of a history: a run's first activity here
// reads its history once from the start (continue-as-new keeps it short).
// A feed that fails polls again after a pause (from the start when the
// server refuses its place); meanwhile the liveness heartbeats still bring
// cancellation, as they always did.
const (
	// feedKeep is how long a feed keeps its place after the last activity
	// of its run here ended.
	feedKeep = 10 * time.Minute
	// feedPollTimeout bounds one long poll, which the server answers
	// within its long-poll timeout (20 s by default): a connection that
	// died without a word is given up and the poll made again.
	feedPollTimeout = 70 * time.Second
	// feedRetry and feedRetryMax space the restarts of a failing feed.
	feedRetry    = time.Second
	feedRetryMax = 30 * time.Second
)

// errCancelRequested is why an activity stopped when its run's history
// said it must: its cancellation was requested, the run closed, or the
// server gave up on the activity.
var errCancelRequested = errors.New("activity cancelled: its run's history says so")

// cancelFeeds are this worker process's feeds, by run.
type cancelFeeds struct {
	mu    sync.Mutex
	feeds map[feedKey]*cancelFeed
}

type feedKey struct{ namespace, workflowID, runID string }

// cancelFeed follows one run's history for the activities of that run
// running here. All its fields are guarded by cancelFeeds.mu.
type cancelFeed struct {
	key  feedKey
	stop context.CancelFunc // stops the poll in flight; nil when none runs
	gen  int                // the poll's generation: an older one's answers are dropped

	token     []byte                                     // where the next read starts; nil: the history's start
	subs      map[string]map[int]context.CancelCauseFunc // by activity id
	next      int
	users     int
	forget    *time.Timer
	scheduled map[int64]string // scheduled event id -> activity id
	ended     map[string]bool  // activity ids the run cancelled or gave up
	closed    bool             // the run closed, or the server no longer has it
}

// watchCancel cancels an activity's context (with cause errCancelRequested)
// when its run's history says the activity must stop: its cancellation was
// requested (an abort), it timed out for good, or the run closed. The
// returned func ends the watch; the activity calls it before it returns.
func (a *Activities) watchCancel(info activity.Info, cancel context.CancelCauseFunc) (unwatch func()) {
	if a.Client == nil {
		return func() {}
	}
	fs := &a.feeds
	fs.mu.Lock()
	defer fs.mu.Unlock()
	key := feedKey{info.Namespace, info.WorkflowExecution.ID, info.WorkflowExecution.RunID}
	activityID := info.ActivityID
	if fs.feeds == nil {
		fs.feeds = map[feedKey]*cancelFeed{}
	}
	f := fs.feeds[key]
	if f == nil {
		f = &cancelFeed{key: key, subs: map[string]map[int]context.CancelCauseFunc{},
			scheduled: map[int64]string{}, ended: map[string]bool{}}
		fs.feeds[key] = f
	}
	if f.forget != nil {
		f.forget.Stop()
		f.forget = nil
	}
	if f.closed || f.ended[activityID] {
		cancel(errCancelRequested)
	}
	f.users++
	f.next++
	id := f.next
	if f.subs[activityID] == nil {
		f.subs[activityID] = map[int]context.CancelCauseFunc{}
	}
	f.subs[activityID][id] = cancel
	if f.stop == nil && !f.closed {
		ctx, stop := context.WithCancel(context.Background())
		f.stop = stop
		f.gen++
		go fs.follow(ctx, a.Client, f, f.gen)
	}
	return func() {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		delete(f.subs[activityID], id)
		if len(f.subs[activityID]) == 0 {
			delete(f.subs, activityID)
		}
		f.users--
		if f.users > 0 {
			return
		}
		// Nothing of the run runs here: no poll, but keep the place.
		if f.stop != nil {
			f.stop()
			f.stop = nil
		}
		f.forget = time.AfterFunc(feedKeep, func() {
			fs.mu.Lock()
			defer fs.mu.Unlock()
			if f.users == 0 && fs.feeds[key] == f {
				delete(fs.feeds, key)
			}
		})
	}
}

// follow long-polls the run's history from the feed's place until the run
// closes or the poll stops, starting again from the history's start after
// a failure.
func (fs *cancelFeeds) follow(ctx context.Context, c client.Client, f *cancelFeed, gen int) {
	pause := feedRetry
	for ctx.Err() == nil {
		fs.mu.Lock()
		token := f.token
		fs.mu.Unlock()
		rpcCtx, cancel := context.WithTimeout(ctx, feedPollTimeout)
		resp, err := c.WorkflowService().GetWorkflowExecutionHistory(rpcCtx, &workflowservice.GetWorkflowExecutionHistoryRequest{
			Namespace:              f.key.namespace,
			Execution:              &commonpb.WorkflowExecution{WorkflowId: f.key.workflowID, RunId: f.key.runID},
			NextPageToken:          token,
			WaitNewEvent:           true,
			HistoryEventFilterType: enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT,
		})
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			var notFound *serviceerror.NotFound
			if errors.As(err, &notFound) {
				// The run is gone (deleted, or past retention): nothing of
				// it runs on.
				fs.closeRun(f, gen)
				return
			}
			var invalid *serviceerror.InvalidArgument
			if errors.As(err, &invalid) {
				// A token the server refuses: read again from the start.
				fs.fromStart(f, gen)
			}
			if !sleep(ctx, pause) {
				return
			}
			pause = min(2*pause, feedRetryMax)
			continue
		}
		if fs.apply(f, gen, resp) {
			return
		}
		if len(resp.GetNextPageToken()) > 0 {
			pause = feedRetry
			continue
		}
		// A running run's history always says where it goes on; should
		// it not, read it again from the start, without spinning.
		fs.fromStart(f, gen)
		if !sleep(ctx, pause) {
			return
		}
		pause = min(2*pause, feedRetryMax)
	}
}

// fromStart makes the feed's next read start at the history's start,
// unless a newer poll took over.
func (fs *cancelFeeds) fromStart(f *cancelFeed, gen int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.gen == gen {
		f.token = nil
	}
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// apply reads one page of history; it says whether the feed is done (the
// run closed, or a newer poll took over).
func (fs *cancelFeeds) apply(f *cancelFeed, gen int, resp *workflowservice.GetWorkflowExecutionHistoryResponse) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.gen != gen {
		return true
	}
	for _, ev := range resp.GetHistory().GetEvents() {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			f.scheduled[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityId()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
			f.end(f.scheduled[ev.GetActivityTaskCancelRequestedEventAttributes().GetScheduledEventId()])
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
			// No attempt runs on: one still running here is a straggler.
			f.end(f.scheduled[ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()])
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
			enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			f.closeLocked()
			return true
		}
	}
	if len(resp.GetNextPageToken()) > 0 {
		f.token = resp.GetNextPageToken()
	}
	return false
}

// end cancels the activity's attempts here, and those that start later.
// Called with cancelFeeds.mu held.
func (f *cancelFeed) end(activityID string) {
	if activityID == "" {
		return
	}
	f.ended[activityID] = true
	for _, cancel := range f.subs[activityID] {
		cancel(errCancelRequested)
	}
}

func (fs *cancelFeeds) closeRun(f *cancelFeed, gen int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.gen == gen {
		f.closeLocked()
	}
}

// closeLocked cancels every activity of a run that closed; its feed polls
// no more.
func (f *cancelFeed) closeLocked() {
	f.closed = true
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
	for _, subs := range f.subs {
		for _, cancel := range subs {
			cancel(errCancelRequested)
		}
	}
}
