package workflows

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/agent"
)

// maxEventsPageBytes bounds one QueryEvents answer, far below gRPC's 4 MB.
const maxEventsPageBytes = 1 << 20

// EventsQuery asks for events from sequence number After+1 on; Limit caps
// the count (0 means as many as fit in a page).
type EventsQuery struct {
	After int64 `json:"after"`
	Limit int   `json:"limit,omitempty"`
}

// EventsPage is one answer of QueryEvents. First and Last are the sequence
// numbers of the oldest and newest events this workflow run holds (a
// session's earlier events are in the runs before a continue-as-new); Done
// is set once the run has ended, so a reader that has seen Last can stop.
// ContinuedAsNew says the events go on in the next run of the same workflow
// id, numbered from Last+1.
type EventsPage struct {
	Events         []agent.Event `json:"events"`
	First          int64         `json:"first"`
	Last           int64         `json:"last"`
	Done           bool          `json:"done"`
	ContinuedAsNew bool          `json:"continuedAsNew,omitempty"`
	// PreviousRunID is the run this one continued, which holds the events
	// before First.
	PreviousRunID string `json:"previousRunId,omitempty"`
}

// eventLog is the run's durable event log: every pi event but message_update,
// numbered from first. It lives in workflow state, so it costs no history:
// replay rebuilds it from the activity results.
type eventLog struct {
	first  int64 // sequence number of events[0]
	events []agent.Event
}

func (l *eventLog) emit(e agent.Event) {
	e.Seq = l.first + int64(len(l.events))
	l.events = append(l.events, e)
}

func (l *eventLog) last() int64 { return l.first + int64(len(l.events)) - 1 }

// page returns events after the given sequence number, bounded in count and
// bytes; at least one event when there is one.
func (l *eventLog) page(q EventsQuery) []agent.Event {
	start := q.After + 1 - l.first
	if start < 0 {
		start = 0
	}
	var out []agent.Event
	size := 0
	for i := start; i < int64(len(l.events)); i++ {
		if q.Limit > 0 && len(out) >= q.Limit {
			break
		}
		b, _ := json.Marshal(l.events[i])
		if len(out) > 0 && size+len(b) > maxEventsPageBytes {
			break
		}
		size += len(b)
		out = append(out, l.events[i])
	}
	return out
}
