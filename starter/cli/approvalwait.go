package cli

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// waitingCalls are the calls of a followed run that wait for approval, as
// its events tell them, so that the stall line can say, once per call,
// that one waits and how to answer it. Safe for the watch's goroutine and
// explainStall's.
type waitingCalls struct {
	mu    sync.Mutex
	calls []waitingCall
	said  map[string]bool // tool call ids whose line was shown
	// line is the stall line of a call that waits, the i-th (from 1) of n
	// waiting: the chat asks it, other commands say how to answer it.
	line func(p agentapi.PendingApproval, i, n int) string
	// asked is the chat's: it asks the calls one at a time, the first
	// waiting one, and its question leaves the cursor on its line, so the
	// stall line is said of the first call only and starts a line of its
	// own.
	asked bool
}

type waitingCall struct {
	agentapi.PendingApproval
	since time.Time // when the follower learnt it waits
}

// see notes the calls an event makes wait or answers.
func (w *waitingCalls) see(ev agent.Event) {
	switch ev.Type {
	case agent.EventApprovalRequest:
		w.add(pendingOf(ev))
	case agent.EventApprovalDecision:
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, c := range w.calls {
			if c.ToolCallID == ev.ToolCallID && subAgentID(c.PendingApproval) == subAgentID(pendingOf(ev)) {
				w.calls = append(w.calls[:i], w.calls[i+1:]...)
				break
			}
		}
	case agent.EventAgentEnd:
		w.mu.Lock()
		defer w.mu.Unlock()
		w.calls = nil
	}
}

// add notes a call that waits (from an event, or from the state of a
// session a chat comes back to).
func (w *waitingCalls) add(p agentapi.PendingApproval) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.calls {
		if c.ToolCallID == p.ToolCallID {
			return
		}
	}
	w.calls = append(w.calls, waitingCall{PendingApproval: p, since: time.Now()})
}

// answered drops a call the chat answered; the call it asks next is
// asked from now on.
func (w *waitingCalls) answered(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range w.calls {
		if c.ToolCallID == id {
			w.calls = append(w.calls[:i], w.calls[i+1:]...)
			if i == 0 && len(w.calls) > 0 {
				w.calls[0].since = time.Now()
			}
			return
		}
	}
}

// stall is explainStall's reason when the run shows nothing else: the
// first waiting call that waited a whole stall check and was not said yet
// (and the key that makes it said once); "" when there is none. Before it
// says one, it asks the run which calls still wait (pending): a run emits
// its approval_decision events only once every call of the turn is
// decided, so the events alone do not tell that one was answered.
func (w *waitingCalls) stall(ctx context.Context, pending func(context.Context) ([]agentapi.PendingApproval, error)) (why, key string) {
	if !w.due() {
		return "", ""
	}
	still, err := pending(ctx)
	if err != nil {
		return "", ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	since := map[string]time.Time{}
	for _, c := range w.calls {
		since[c.ToolCallID] = c.since
	}
	w.calls = w.calls[:0]
	for _, p := range still {
		t, ok := since[p.ToolCallID]
		if !ok {
			t = time.Now()
		}
		w.calls = append(w.calls, waitingCall{PendingApproval: p, since: t})
	}
	for i, c := range w.calls {
		if i > 0 && w.asked {
			break
		}
		if w.said[c.ToolCallID] || time.Since(c.since) < stallCheck {
			continue
		}
		if w.said == nil {
			w.said = map[string]bool{}
		}
		w.said[c.ToolCallID] = true
		return w.line(c.PendingApproval, i+1, len(w.calls)), "approval " + c.ToolCallID
	}
	return "", ""
}

// due says whether a call waited a whole stall check and was not said:
// only then is the run asked.
func (w *waitingCalls) due() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, c := range w.calls {
		if i > 0 && w.asked {
			break
		}
		if !w.said[c.ToolCallID] && time.Since(c.since) >= stallCheck {
			return true
		}
	}
	return false
}

// askedLine is the chat's stall line: the chat asks the waiting calls in
// order, so the first is the one its question is about.
func askedLine(p agentapi.PendingApproval, i, n int) string {
	return fmt.Sprintf("waiting for your approval of %s %s (%d of %d waiting): y/n/always", p.ToolName, p.ToolCallID, i, n)
}

// answerElsewhere is the stall line of a command that follows a run but
// cannot answer its approvals; session says whether the run is a
// session's (which a chat can answer).
func answerElsewhere(id string, session bool) func(p agentapi.PendingApproval, i, n int) string {
	return func(p agentapi.PendingApproval, i, n int) string {
		line := fmt.Sprintf("%s %s waits for approval: answer with `starter approve %s %s allow|deny|always`", p.ToolName, p.ToolCallID, id, callWithPosition(p.ToolCallID, p.Position))
		if session {
			line += fmt.Sprintf(" or in `starter session chat %s`", id)
		}
		return line
	}
}

// isSession says whether workflow id is a session (which a chat can
// answer); false when it cannot tell.
func (e *env) isSession(ctx context.Context, id string) bool {
	d, err := e.c.DescribeWorkflow(ctx, id, "")
	return err == nil && d.RawResponse.GetWorkflowExecutionInfo().GetType().GetName() == agentapi.SessionWorkflow
}
