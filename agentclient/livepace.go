package agentclient

import "time"

// LivePollMax is the longest Watch waits between two reads of the live
// stream and partial results (DescribeWorkflowExecution) while a model turn
// streams or tools run: a read that brings nothing doubles the wait, up to
// this, and a read that brings something halves it, down to
// LivePollInterval. So the reads follow what happens: about the worker's
// heartbeat pace while it streams (at most 4 a second, see
// activities/stream.go), and one a second while a tool runs silently,
// where a fixed LivePollInterval made 20 a second whatever happened.
var LivePollMax = time.Second

// livePace is the adaptive wait between two live reads.
type livePace struct {
	wait time.Duration
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
	p.next()
	if brought {
		p.wait = max(p.wait/2, LivePollInterval)
		return
	}
	p.wait = min(p.wait*2, max(LivePollMax, LivePollInterval))
}
