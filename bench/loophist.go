package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"
)

// histStats counts what one run recorded.
type histStats struct {
	events, bytes int
	wfts          int // WorkflowTaskScheduled events: workflow tasks
	activities    int // ActivityTaskScheduled events
	markers       int // MarkerRecorded: local activities
	timers        int // TimerStarted
	signals       int
}

func statsOf(evs []*historypb.HistoryEvent) histStats {
	var h histStats
	for _, ev := range evs {
		h.events++
		h.bytes += proto.Size(ev)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			h.wfts++
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			h.activities++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			h.markers++
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			h.timers++
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			h.signals++
		}
	}
	return h
}

// eventName turns EVENT_TYPE_ACTIVITY_TASK_SCHEDULED into
// ActivityTaskScheduled.
func eventName(t enumspb.EventType) string {
	name := t.String()
	if !strings.Contains(name, "_") {
		return name // the API's String already gives ActivityTaskScheduled
	}
	parts := strings.Split(strings.TrimPrefix(name, "EVENT_TYPE_"), "_")
	for i, p := range parts {
		parts[i] = p[:1] + strings.ToLower(p[1:])
	}
	return strings.Join(parts, "")
}

// segments collects durations by name, in first-seen order.
type segments struct {
	order []string
	by    map[string][]time.Duration
}

func (s *segments) add(name string, d time.Duration) {
	if s.by == nil {
		s.by = map[string][]time.Duration{}
	}
	if _, ok := s.by[name]; !ok {
		s.order = append(s.order, name)
	}
	s.by[name] = append(s.by[name], d)
}

// timing is a history's events with their times, indexed for the
// breakdown.
type timing struct {
	evs      []*historypb.HistoryEvent
	at       map[int64]time.Time // event id → time
	actType  map[int64]string    // ActivityTaskScheduled id → activity type
	wftCause map[int64]string    // WorkflowTaskScheduled id → what caused it
}

func newTiming(evs []*historypb.HistoryEvent) *timing {
	t := &timing{evs: evs, at: map[int64]time.Time{}, actType: map[int64]string{}, wftCause: map[int64]string{}}
	for i, ev := range evs {
		t.at[ev.GetEventId()] = ev.GetEventTime().AsTime()
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			t.actType[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED && i > 0 {
			t.wftCause[ev.GetEventId()] = t.describe(evs[i-1])
		}
	}
	return t
}

// describe names an event by what it means for the loop.
func (t *timing) describe(ev *historypb.HistoryEvent) string {
	switch {
	case ev.GetActivityTaskCompletedEventAttributes() != nil:
		return t.actType[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] + " completed"
	case ev.GetActivityTaskStartedEventAttributes() != nil:
		return t.actType[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] + " started"
	case ev.GetActivityTaskScheduledEventAttributes() != nil:
		return t.actType[ev.GetEventId()]
	case ev.GetWorkflowExecutionStartedEventAttributes() != nil:
		return "run start"
	case ev.GetTimerFiredEventAttributes() != nil:
		return "timer fired"
	case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
		return "signal " + ev.GetWorkflowExecutionSignaledEventAttributes().GetSignalName()
	case ev.GetMarkerRecordedEventAttributes() != nil:
		return ev.GetMarkerRecordedEventAttributes().GetMarkerName()
	}
	return eventName(ev.GetEventType())
}

// segments measures each workflow task (queued: scheduled→started; run by
// the worker: started→completed, local activities included) by its cause,
// and each activity (schedule→start; start→complete) by type.
func (t *timing) segments() *segments {
	s := &segments{}
	wftStarted := map[int64]time.Time{}
	actStarted := map[int64]time.Time{}
	for _, ev := range t.evs {
		now := ev.GetEventTime().AsTime()
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
			sched := a.GetScheduledEventId()
			wftStarted[sched] = now
			s.add("workflow task queued (scheduled→started), after "+t.wftCause[sched], now.Sub(t.at[sched]))
		}
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			sched := a.GetScheduledEventId()
			s.add("workflow task on worker (started→completed), after "+t.wftCause[sched], now.Sub(wftStarted[sched]))
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			sched := a.GetScheduledEventId()
			actStarted[sched] = now
			s.add("activity "+t.actType[sched]+" scheduled→started", now.Sub(t.at[sched]))
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			sched := a.GetScheduledEventId()
			s.add("activity "+t.actType[sched]+" started→completed", now.Sub(actStarted[sched]))
		}
	}
	return s
}

// scheduled returns the indexes of the ActivityTaskScheduled events of an
// activity type.
func (t *timing) scheduled(activityType string) []int {
	var idx []int
	for i, ev := range t.evs {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == activityType {
			idx = append(idx, i)
		}
	}
	return idx
}

// printBreakdown prints where one run's time went, from its history's
// event times, and one turn of it event by event.
func printBreakdown(w io.Writer, name string, evs []*historypb.HistoryEvent, showTurn int) {
	t := newTiming(evs)
	st := statsOf(evs)
	total := t.at[evs[len(evs)-1].GetEventId()].Sub(t.at[evs[0].GetEventId()])
	turns := t.scheduled("ModelTurn")
	fmt.Fprintf(w, "%s: %d events, %d workflow tasks, %d activities, %d local-activity markers, %d timers; first to last event %.1f ms\n",
		name, st.events, st.wfts, st.activities, st.markers, st.timers, ms(total))
	fmt.Fprintf(w, "  %-78s %4s %8s %8s %8s %9s\n", "segment", "n", "mean ms", "p50 ms", "max ms", "total ms")
	segs := t.segments()
	for _, k := range segs.order {
		d := segs.by[k]
		fmt.Fprintf(w, "  %-78s %4d %8.2f %8.2f %8.2f %9.1f\n", k, len(d), ms(mean(d)), ms(median(d)), ms(quantile(d, 1)), ms(sum(d)))
	}

	// Per turn: ModelTurn scheduled → next ModelTurn scheduled.
	var perTurn []time.Duration
	var eventsPerTurn, wftsPerTurn []int
	for i := 0; i+1 < len(turns); i++ {
		perTurn = append(perTurn, t.evs[turns[i+1]].GetEventTime().AsTime().Sub(t.evs[turns[i]].GetEventTime().AsTime()))
		sub := statsOf(t.evs[turns[i]:turns[i+1]])
		eventsPerTurn = append(eventsPerTurn, sub.events)
		wftsPerTurn = append(wftsPerTurn, sub.wfts)
	}
	if len(perTurn) > 0 {
		fmt.Fprintf(w, "  per turn (ModelTurn scheduled → next ModelTurn scheduled): mean %.2f ms, p50 %.2f ms; events per turn %v; workflow tasks per turn %v\n",
			ms(mean(perTurn)), ms(median(perTurn)), distinct(eventsPerTurn), distinct(wftsPerTurn))
	}
	// Per sequential tool call: one ExecuteToolCall scheduled → the next,
	// within a turn.
	calls := t.scheduled("ExecuteToolCall")
	var perCall []time.Duration
	for i := 0; i+1 < len(calls); i++ {
		between := t.evs[calls[i]:calls[i+1]]
		if statsOf(between).activities == 1 && !hasActivity(t, between, "ModelTurn") {
			perCall = append(perCall, t.evs[calls[i+1]].GetEventTime().AsTime().Sub(t.evs[calls[i]].GetEventTime().AsTime()))
		}
	}
	if len(perCall) > 0 {
		fmt.Fprintf(w, "  per sequential tool call (ExecuteToolCall scheduled → next ExecuteToolCall scheduled): mean %.2f ms, p50 %.2f ms (n=%d)\n",
			ms(mean(perCall)), ms(median(perCall)), len(perCall))
	}
	if showTurn > 0 && showTurn < len(turns) {
		from, to := turns[showTurn-1], turns[showTurn]
		fmt.Fprintf(w, "  turn %d event by event, in time order (ms from its ModelTurn scheduled; Δ from the line before; the server writes\n", showTurn)
		fmt.Fprintf(w, "  ActivityTaskStarted with the completion, so its id is later than its time):\n")
		start := t.evs[from].GetEventTime().AsTime()
		prev := start
		line := slices.Clone(t.evs[from : to+1])
		slices.SortStableFunc(line, func(a, b *historypb.HistoryEvent) int {
			return a.GetEventTime().AsTime().Compare(b.GetEventTime().AsTime())
		})
		for _, ev := range line {
			at := ev.GetEventTime().AsTime()
			fmt.Fprintf(w, "    %8.2f  %+7.2f  %-5d %-32s %s\n", ms(at.Sub(start)), ms(at.Sub(prev)), ev.GetEventId(), eventName(ev.GetEventType()), t.detail(ev))
			prev = at
		}
	}
}

func hasActivity(t *timing, evs []*historypb.HistoryEvent, activityType string) bool {
	for _, ev := range evs {
		if t.actType[ev.GetEventId()] == activityType {
			return true
		}
	}
	return false
}

// detail is what a timeline line says about an event besides its type.
func (t *timing) detail(ev *historypb.HistoryEvent) string {
	switch {
	case ev.GetActivityTaskScheduledEventAttributes() != nil:
		return t.actType[ev.GetEventId()]
	case ev.GetActivityTaskStartedEventAttributes() != nil:
		a := ev.GetActivityTaskStartedEventAttributes()
		return fmt.Sprintf("%s (scheduled %d)", t.actType[a.GetScheduledEventId()], a.GetScheduledEventId())
	case ev.GetActivityTaskCompletedEventAttributes() != nil:
		a := ev.GetActivityTaskCompletedEventAttributes()
		return fmt.Sprintf("%s (scheduled %d)", t.actType[a.GetScheduledEventId()], a.GetScheduledEventId())
	case ev.GetWorkflowTaskScheduledEventAttributes() != nil:
		return "after " + t.wftCause[ev.GetEventId()]
	case ev.GetMarkerRecordedEventAttributes() != nil:
		return ev.GetMarkerRecordedEventAttributes().GetMarkerName()
	}
	return ""
}

func distinct(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func sum(d []time.Duration) time.Duration {
	var s time.Duration
	for _, x := range d {
		s += x
	}
	return s
}

func mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return sum(d) / time.Duration(len(d))
}

// median is the middle value, or the mean of the two middle values.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile is the nearest-rank quantile, the ceil(q·n)-th smallest value:
// 0.99 of 200 values is the 198th, 1 is the max.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(d))
	i := int(q*float64(len(s))+0.999999) - 1
	return s[max(0, min(len(s)-1, i))]
}
