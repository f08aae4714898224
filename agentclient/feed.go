package agentclient

import (
	"context"
	"sync"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
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
// way to start a long poll at the end. Each completed workflow task it
// reads pokes news, which holds one poke, so a catch-up costs the watcher
// one Query however long the history.
type historyFeed struct {
	runID  string // as Watch asked for it: "" is the latest run
	news   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	err    error
	closed enumspb.EventType // the run's close event; 0 while it runs
}

func startFeed(ctx context.Context, c client.Client, workflowID, runID string) *historyFeed {
	ctx, cancel := context.WithCancel(ctx)
	f := &historyFeed{runID: runID, news: make(chan struct{}, 1), cancel: cancel, done: make(chan struct{})}
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
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				f.poke()
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
				enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				f.finish(nil, t)
				return
			}
		}
		// The iterator ends only after the close event or an error.
		f.finish(nil, enumspb.EVENT_TYPE_UNSPECIFIED)
	}()
	return f
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
