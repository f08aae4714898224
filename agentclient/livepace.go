package agentclient

import "time"

// LivePollMax is the longest Watch waits between two reads of the running
// tools' partial results (DescribeWorkflowExecution) while no model turn
// streams (a streaming turn is read every LivePollInterval: its deltas
// are due on screen within 300 ms). Reads come every LivePollInterval
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

func newPace() livePace {
	return livePace{last: time.Now()}
}

// next is the wait before the next read.
func (p *livePace) next() time.Duration {
	if p.wait < LivePollInterval {
		p.wait = LivePollInterval
	}
	return p.wait
}

// read adjusts the wait to what a read brought.
func (p *livePace) read(brought bool) {
	switch {
	case brought:
		p.wait, p.last = LivePollInterval, time.Now()
	case time.Since(p.last) < LiveQuiet:
		p.wait = LivePollInterval
	default:
		p.wait = min(max(p.wait, LivePollInterval)*2, max(LivePollMax, LivePollInterval))
	}
}
