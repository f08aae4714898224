package workflows

import (
	"encoding/json"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// maxEventsPageBytes bounds one QueryEvents answer, far below gRPC's 4 MB.
const maxEventsPageBytes = 1 << 20

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
func (l *eventLog) page(q agentapi.EventsQuery) []agent.Event {
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

// maxExcerptBytes bounds the events a model turn's input carries for
// watchers (excerpt); past it the watcher asks the events Query.
const maxExcerptBytes = 32 << 10

// excerpt returns the events after seq after for a watcher (agentapi.LogExcerpt:
// the next ModelTurn's input, or a memo upsert where the run rests), or nil
// when they are over limit bytes. The input and the memo are not compared
// on replay, so what they carry needs no version; whether a command is
// made must not depend on it (carryAtRest), as a later build may encode
// the events to another size.
func (l *eventLog) excerpt(after int64, limit int) []agent.Event {
	start := after + 1 - l.first
	if start < 0 {
		start = 0
	}
	var out []agent.Event
	size := 0
	for i := start; i < int64(len(l.events)); i++ {
		b, _ := json.Marshal(l.events[i])
		if size += len(b); size > limit {
			return nil
		}
		out = append(out, l.events[i])
	}
	return out
}
