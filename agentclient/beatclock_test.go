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
			local := first.Add(offset - 30*time.Millisecond)
			reads := 0
			var lags []time.Duration // from each heartbeat to the read that saw it
			for local.Add(-offset).Before(first.Add(10 * time.Second)) {
				reads++
				at := local.Add(rpc - offset) // when the server answers, server time
				seen := latest(at)
				if !seen.IsZero() && seen.After(b.last) {
					lags = append(lags, at.Sub(seen))
				}
				b.saw(seen, local, local.Add(2*rpc))
				local = local.Add(2*rpc + b.wait(local.Add(2*rpc)))
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
