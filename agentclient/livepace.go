package agentclient

import (
	"time"

	"github.com/durable-agents/agentloop/agentapi"
)

// LivePollMax is the longest Watch waits between two reads of the running
// tools' partial results (DescribeWorkflowExecution) while no model turn
// streams (a streaming turn is read at its heartbeats' pace, beatClock:
// its deltas are due on screen within 300 ms). Reads come every LivePollInterval
// while they bring something, and for LiveQuiet after the last that did (a
// tool with output heartbeats every 100 ms); after that each read that
// brings nothing doubles the wait, up to LivePollMax. So a tool that runs
// silently costs about one read a second, where a fixed LivePollInterval
// made 20 a second whatever happened.
var LivePollMax = time.Second

// LiveQuiet is how long after a read that brought something, or after a
// tool started, reads stay at LivePollInterval.
var LiveQuiet = 500 * time.Millisecond

// livePace is the wait between two live reads; its zero value starts
// quiet, a fresh one (newPace) starts fast.
type livePace struct {
	wait time.Duration
	last time.Time // the last read that brought something, or the pace's start
}

func newPace(now time.Time) livePace {
	return livePace{last: now}
}

// next is the wait before the next read.
func (p *livePace) next() time.Duration {
	if p.wait < LivePollInterval {
		p.wait = LivePollInterval
	}
	return p.wait
}

// read adjusts the wait to what a read that returned at now brought.
func (p *livePace) read(brought bool, now time.Time) {
	switch {
	case brought:
		p.wait, p.last = LivePollInterval, now
	case now.Sub(p.last) < LiveQuiet:
		p.wait = LivePollInterval
	default:
		p.wait = min(max(p.wait, LivePollInterval)*2, max(LivePollMax, LivePollInterval))
	}
}

// LiveBeatMargin is how long after a heartbeat is due Watch reads it: the
// slack for the worker's timer and its RPC to the server.
var LiveBeatMargin = 25 * time.Millisecond

// beatClock phase-locks the live reads of a streaming model turn to its
// heartbeats. Reading every LivePollInterval (20 a second) showed each
// delta up to 50 ms after its heartbeat; a read just after each heartbeat
// is due (about 4 a second) shows it as soon. The server says when the
// last heartbeat came (PendingActivityInfo.LastHeartbeatTime, server time):
// the next comes agentapi.StreamInterval later while the model streams. A read
// that finds no new heartbeat (the model paused, a heartbeat came late)
// goes back to LivePollInterval until one comes.
//
// Server times map to local ones by the clocks' offset, taken as zero (as
// NTP keeps them) unless the reads prove otherwise: a read that saw a
// heartbeat returned after it (offset <= its return - the heartbeat's
// time), and one that missed it started before it (offset > its start -
// the time of the heartbeat seen next). Reads aimed early by a wrong
// offset miss and fall back to the fast pace, which moves the bound.
type beatClock struct {
	last   time.Time // server time of the last heartbeat seen
	missed time.Time // local start of the last read that found none new since
	// lo and hi bound the clocks' offset (local - server), once known.
	lo, hi           time.Duration
	loKnown, hiKnown bool
	due              time.Time // local time of the next read; zero: LivePollInterval
}

// saw records what a read that started at start and returned at end found:
// the server time of the model turn's last heartbeat (zero: none).
func (b *beatClock) saw(beat, start, end time.Time) {
	if beat.IsZero() || !beat.After(b.last) {
		b.missed = start
		if !end.Before(b.due) {
			b.due = time.Time{} // the heartbeat is late: read fast until it comes
		}
		return
	}
	if !b.missed.IsZero() {
		if lo := b.missed.Sub(beat); !b.loKnown || lo > b.lo {
			b.lo, b.loKnown = lo, true
		}
		b.missed = time.Time{}
	}
	if hi := end.Sub(beat); !b.hiKnown || hi < b.hi {
		b.hi, b.hiKnown = hi, true
	}
	b.last = beat
	b.due = beat.Add(b.offset() + agentapi.StreamInterval + LiveBeatMargin)
}

// newTurn readies the clock for a model turn's heartbeats: what it knows of
// the clocks' offset is the watcher's and the server's, and stays.
func (b *beatClock) newTurn() {
	b.last, b.missed, b.due = time.Time{}, time.Time{}, time.Time{}
}

// offset is the clocks' offset: zero, or the nearest bound that excludes
// zero.
func (b *beatClock) offset() time.Duration {
	var off time.Duration
	if b.loKnown && off < b.lo {
		off = b.lo
	}
	if b.hiKnown && off > b.hi {
		off = b.hi
	}
	return off
}

// wait is the wait at now before the next read: until the next heartbeat
// is due and LiveBeatMargin more, never longer than one interval and the
// margin. ok is false while no heartbeat is due (none came yet, or the
// last is late): streamWait then paces the reads.
func (b *beatClock) wait(now time.Time) (d time.Duration, ok bool) {
	if b.due.IsZero() {
		return 0, false
	}
	return min(max(b.due.Sub(now), 0), agentapi.StreamInterval+LiveBeatMargin), true
}

// streamWait is the wait at now before the next read of a streaming model
// turn: on its heartbeats while they come, and while none is due the pace
// of what the reads bring, at most a heartbeat's interval and margin. A
// heartbeat a little late is read within LivePollInterval (the last read
// brought deltas less than LiveQuiet ago); a model that pauses to think
// for seconds costs about 4 reads a second, where reading every
// LivePollInterval made 20, and its first delta after the pause is still
// on screen within one interval and the margin.
func streamWait(b *beatClock, p *livePace, now time.Time) time.Duration {
	if d, ok := b.wait(now); ok {
		return d
	}
	return min(p.next(), agentapi.StreamInterval+LiveBeatMargin)
}
