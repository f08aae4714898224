package crashtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durable-agents/agentloop/internal/harness/testenv"
)

// attempt is what history says about one scheduled activity.
type attempt struct {
	Type     string
	ID       string
	Attempt  int32  // of the attempt that ended it
	Identity string // worker that ran that attempt
	// LastFailure is how the attempt before it failed.
	LastFailure string
	// Outcome is completed, failed, timed out (with the timeout type) or
	// pending.
	Outcome string
}

// scheduledActivities lists a history's activities in schedule order.
func scheduledActivities(h *historypb.History) []*attempt {
	var out []*attempt
	byID := map[int64]*attempt{}
	for _, ev := range h.GetEvents() {
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			a := ev.GetActivityTaskScheduledEventAttributes()
			at := &attempt{Type: a.GetActivityType().GetName(), ID: a.GetActivityId(), Outcome: "pending"}
			byID[ev.GetEventId()] = at
			out = append(out, at)
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			at := byID[a.GetScheduledEventId()]
			at.Attempt, at.Identity = a.GetAttempt(), a.GetIdentity()
			if f := a.GetLastFailure(); f != nil {
				at.LastFailure = f.GetMessage()
				if ti := f.GetTimeoutFailureInfo(); ti != nil {
					at.LastFailure = "timeout " + ti.GetTimeoutType().String()
				}
			}
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			byID[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()].Outcome = "completed"
		case ev.GetActivityTaskFailedEventAttributes() != nil:
			a := ev.GetActivityTaskFailedEventAttributes()
			byID[a.GetScheduledEventId()].Outcome = "failed: " + a.GetFailure().GetMessage()
		case ev.GetActivityTaskTimedOutEventAttributes() != nil:
			a := ev.GetActivityTaskTimedOutEventAttributes()
			out := "timed out"
			if ti := a.GetFailure().GetTimeoutFailureInfo(); ti != nil {
				out += " " + ti.GetTimeoutType().String()
			}
			byID[a.GetScheduledEventId()].Outcome = out
		}
	}
	return out
}

func ofType(as []*attempt, typ string) []*attempt {
	var out []*attempt
	for _, a := range as {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

func (a *attempt) String() string {
	s := fmt.Sprintf("%s(id %s) attempt %d by %s: %s", a.Type, a.ID, a.Attempt, a.Identity, a.Outcome)
	if a.LastFailure != "" {
		s += "; previous attempt: " + a.LastFailure
	}
	return s
}

// logActivities logs the run's activities as history records them.
func (e *env) logActivities(id string) []*attempt {
	e.t.Helper()
	e.saveHistory(id)
	as := scheduledActivities(e.history(id))
	for _, a := range as {
		e.t.Logf("  history: %s", a)
	}
	return as
}

// saveHistory writes a run's history to $CRASHTEST_SAVE_HISTORY/<test>-<id>.json
// when that is set, for replaying it against changed workflow code.
func (e *env) saveHistory(id string) {
	e.t.Helper()
	dir := os.Getenv("CRASHTEST_SAVE_HISTORY")
	if dir == "" {
		return
	}
	// A subtest's name holds a slash; the file stays in dir.
	path := filepath.Join(dir, strings.ReplaceAll(e.t.Name()+"-"+id, "/", "-")+".json")
	require.NoError(e.t, testenv.SaveHistory(context.Background(), e.c, id, "", path))
	e.logf("saved history to %s", path)
}

// logHistory logs the events of every run of a workflow id (a parent
// continued as new has several) with their times, timers' durations and
// signals' payloads when CRASHTEST_HISTORY is set, for looking into a
// slow or failing test.
func (e *env) logHistory(id string) {
	e.t.Helper()
	if os.Getenv("CRASHTEST_HISTORY") == "" {
		return
	}
	var first time.Time
	for run, h := range e.chain(id) {
		e.t.Logf("  %s run %d", id, run+1)
		for _, ev := range h.GetEvents() {
			at := ev.GetEventTime().AsTime()
			if first.IsZero() {
				first = at
			}
			detail := ""
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				detail = a.GetActivityType().GetName()
			}
			if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
				detail = a.GetIdentity()
			}
			if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
				detail = a.GetCause().String()
			}
			if a := ev.GetWorkflowTaskTimedOutEventAttributes(); a != nil {
				detail = a.GetTimeoutType().String()
			}
			if a := ev.GetTimerStartedEventAttributes(); a != nil {
				detail = a.GetStartToFireTimeout().AsDuration().String()
			}
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
				detail = a.GetSignalName()
				if p := a.GetInput().GetPayloads(); len(p) > 0 {
					detail += " " + clip(string(p[0].GetData()), 300)
				}
			}
			e.t.Logf("  %s event %3d %6.2fs %s %s", id, ev.GetEventId(), at.Sub(first).Seconds(), ev.GetEventType(), detail)
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
