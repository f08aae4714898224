package agentclient

import (
	"testing"
	"time"

	"github.com/durable-agents/agentloop/agentapi"
)

// The reads of a streaming turn follow its heartbeats whatever the offset
// between the server's clock and the watcher's: one read per heartbeat,
// LiveBeatMargin after it where the clocks agree or the watcher's is ahead
// (the reads that miss move the aim later), at most LivePollInterval more
// where the watcher's is behind (the first read that saw a heartbeat bounds
// the offset).
func TestBeatClockFollowsHeartbeatsAcrossClockOffsets(t *testing.T) {
	const rpc = 2 * time.Millisecond // each way
	for _, offset := range []time.Duration{0, -time.Second, 150 * time.Millisecond, time.Second} {
		t.Run(offset.String(), func(t *testing.T) {
			// The worker heartbeats every agentapi.StreamInterval from first,
			// server time; the watcher's clock reads offset more.
			first := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
			latest := func(at time.Time) time.Time {
				if at.Before(first) {
					return time.Time{}
				}
				return first.Add(at.Sub(first) / agentapi.StreamInterval * agentapi.StreamInterval)
			}
			var b beatClock
			p := newPace(first)
			local := first.Add(offset - 30*time.Millisecond)
			reads := 0
			var lags []time.Duration // from each heartbeat to the read that saw it
			for local.Add(-offset).Before(first.Add(10 * time.Second)) {
				reads++
				var at, beat time.Time
				at, beat, local = simRead(&b, &p, local, offset, rpc, latest)
				if !beat.IsZero() {
					lags = append(lags, at.Sub(beat))
				}
			}
			t.Logf("%d reads, lags %v", reads, lags)
			if len(lags) < 39 || reads > 45 {
				t.Fatalf("%d reads saw %d of the 40 heartbeats", reads, len(lags))
			}
			bound := LiveBeatMargin + 2*rpc
			if offset < 0 {
				bound += LivePollInterval
			}
			for _, lag := range lags[5:] {
				if lag > bound {
					t.Errorf("a heartbeat waited %v for the read that saw it, more than %v", lag, bound)
				}
			}
		})
	}
}

// A model that pauses for 10 s between two stretches of deltas (thinking,
// or a provider that stalls) costs a watcher about 4 reads a second of the
// pause, where reading every LivePollInterval made 20; the first heartbeat
// after the pause is read within a heartbeat's interval and margin.
func TestBeatClockBacksOffWhileTheModelPauses(t *testing.T) {
	const rpc = 2 * time.Millisecond // each way, clocks agreeing
	first := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	resume := first.Add(12 * time.Second) // heartbeats stop at 2 s
	latest := func(at time.Time) time.Time {
		switch {
		case at.Before(first):
			return time.Time{}
		case at.Before(resume):
			return first.Add(min(at.Sub(first), 2*time.Second) / agentapi.StreamInterval * agentapi.StreamInterval)
		}
		return resume.Add(at.Sub(resume) / agentapi.StreamInterval * agentapi.StreamInterval)
	}
	var b beatClock
	p := newPace(first)
	local := first.Add(-30 * time.Millisecond)
	paused, lag := 0, time.Duration(-1)
	for local.Before(resume.Add(2 * time.Second)) {
		var at, beat time.Time
		at, beat, local = simRead(&b, &p, local, 0, rpc, latest)
		if at.After(first.Add(2*time.Second+agentapi.StreamInterval)) && at.Before(resume) {
			paused++
		}
		if !beat.IsZero() && !beat.Before(resume) && lag < 0 {
			lag = at.Sub(beat)
		}
	}
	t.Logf("%d reads in the 9.75 s pause; the first heartbeat after it read %v late", paused, lag)
	pause := 10*time.Second - agentapi.StreamInterval
	if max := int(pause/(agentapi.StreamInterval+LiveBeatMargin)) + int(LiveQuiet/LivePollInterval) + 2; paused > max {
		t.Errorf("%d reads in the pause, more than %d", paused, max)
	}
	if lag < 0 || lag > agentapi.StreamInterval+LiveBeatMargin+2*rpc {
		t.Errorf("the first heartbeat after the pause was read %v after it came", lag)
	}
}

// What the reads learned of the clocks' offset holds for the next model
// turn: with the server's clock a second behind the watcher's, a turn's
// second heartbeat is read LiveBeatMargin after it from the second turn
// on, where a clock made anew for each turn missed it once more (51 ms).
func TestBeatClockKeepsTheOffsetAcrossTurns(t *testing.T) {
	const rpc, offset = 2 * time.Millisecond, time.Second
	var b beatClock
	for turn, first := range []time.Time{time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC), time.Date(2026, 12, 7, 10, 0, 20, 0, time.UTC)} {
		b.newTurn()
		local := first.Add(offset - 30*time.Millisecond)
		p := newPace(local)
		var lags []time.Duration
		for len(lags) < 3 {
			latest := func(at time.Time) time.Time {
				if at.Before(first) {
					return time.Time{}
				}
				return first.Add(at.Sub(first) / agentapi.StreamInterval * agentapi.StreamInterval)
			}
			var at, beat time.Time
			at, beat, local = simRead(&b, &p, local, offset, rpc, latest)
			if !beat.IsZero() {
				lags = append(lags, at.Sub(beat))
			}
		}
		t.Logf("turn %d: lags %v", turn+1, lags)
		if turn == 1 && lags[1] > LiveBeatMargin+2*rpc {
			t.Errorf("the second turn's second heartbeat was read %v after it came", lags[1])
		}
	}
}

// simRead is one read of a simulated watcher, starting at local by its
// clock, of a server whose clock reads offset less and whose last
// heartbeat at server time x is latest(x), each way of the round trip
// taking rpc. It returns the server time of the answer, the heartbeat the
// read saw if it was new (else zero), and when the next read starts.
func simRead(b *beatClock, p *livePace, local time.Time, offset, rpc time.Duration, latest func(time.Time) time.Time) (at, beat, next time.Time) {
	at = local.Add(rpc - offset)
	seen := latest(at)
	brought := !seen.IsZero() && seen.After(b.last)
	if brought {
		beat = seen
	}
	end := local.Add(2 * rpc)
	b.saw(seen, local, end)
	p.read(brought, end)
	return at, beat, end.Add(streamWait(b, p, end))
}
