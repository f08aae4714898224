package workflows

import (
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/durable-agents/agentloop/agentapi"
)

// A tool call runs once in pi. Here its execute activity may run again: a
// retry-safe tool after its worker was lost or stopped, any tool after a
// retryable failure. Each attempt queues its own steering and follow-up
// messages, so a call's messages are those of one attempt, its latest: an
// attempt's first message removes what earlier attempts of the call queued
// and are still waiting (in a queue or held by a parallel batch), and a
// message from an earlier attempt than one already heard from (a worker
// that went on after it was given up on) is dropped. Partial results are
// progress, shown as they came, and stay.

// attemptsVersion marks histories where a call keeps one attempt's
// messages; histories before it keep every attempt's, and replay so.
const (
	attemptsChange  = "tool-messages-of-one-attempt"
	attemptsVersion = 1
)

// keepsAttempt applies that rule to a message a tool queued and says
// whether to keep it.
func (l *loop) keepsAttempt(q agentapi.ToolQueue) bool {
	if q.Attempt == 0 || q.ToolCallID == "" {
		return true
	}
	key := attemptKey(q.ToolCallID, q.Position)
	latest := l.queuedAttempt[key]
	if q.Attempt == latest {
		return true
	}
	if latest == 0 {
		l.queuedAttempt[key] = q.Attempt
		return true
	}
	// Only a retried call gets here, so only its history gets the marker.
	if workflow.GetVersion(l.rootCtx, attemptsChange, workflow.DefaultVersion, attemptsVersion) == workflow.DefaultVersion {
		return true
	}
	log := workflow.GetLogger(l.rootCtx)
	if q.Attempt < latest {
		log.Warn("Dropped a message queued by an earlier attempt of a tool call", "ToolCallID", q.ToolCallID,
			"Attempt", q.Attempt, "Latest", latest)
		return false
	}
	l.queuedAttempt[key] = q.Attempt
	dropped := l.steering.dropEarlierAttempts(key, q.Attempt) +
		l.followUps.dropEarlierAttempts(key, q.Attempt)
	if l.batch != nil {
		dropped += l.batch.dropEarlierAttempts(key, q.Attempt)
	}
	log.Info("A retried tool call queued a message: dropped its earlier attempts' messages", "ToolCallID", q.ToolCallID,
		"Attempt", q.Attempt, "Dropped", dropped)
	return true
}

// attemptKey names a call in queuedAttempt and in the queues' records of
// who queued what: its id, with its position when the signal carries one,
// since calls of one message may share an id (toolbatch.go, runningCall).
// Signals sent before positions existed name the call by id alone, as then.
func attemptKey(id string, pos int) string {
	if pos == 0 {
		return id
	}
	return strconv.Itoa(pos) + "\x00" + id
}

// dropEarlierAttempts removes the held messages an earlier attempt of the
// call (its attemptKey) queued.
func (b *batch) dropEarlierAttempts(key string, attempt int32) int {
	dropped := 0
	held := b.held[:0]
	for _, h := range b.held {
		if q := h.queued; q != nil && attemptKey(q.ToolCallID, q.Position) == key && q.Attempt > 0 && q.Attempt < attempt {
			dropped++
			continue
		}
		held = append(held, h)
	}
	b.held = held
	return dropped
}
