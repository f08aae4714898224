package workflows_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/tools"
)

// retriedQueuer is a tool whose first attempt queues a steering message and
// a follow-up and then faults (retried), leaving behind a goroutine that
// queues one more message once the second attempt has queued its own (a
// worker that went on after its attempt was given up on); its second
// attempt queues a steering message, waits for that late one, and
// succeeds. A person's steering message arrives between the attempts.
type retriedQueuer struct {
	mu       sync.Mutex
	attempts map[string]int
	between  func()
	second   chan struct{} // closed when attempt 2 has queued
	late     chan error    // the late message's outcome
}

func (r *retriedQueuer) tool() tools.FuncTool {
	return tool("queuer", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
		r.mu.Lock()
		r.attempts[c.ID]++
		n := r.attempts[c.ID]
		r.mu.Unlock()
		if err := c.Run.Steer(ctx, agent.UserText(fmt.Sprintf("steer from attempt %d", n), 0)); err != nil {
			return agent.ToolResult{}, err
		}
		if n == 1 {
			if err := c.Run.FollowUp(ctx, agent.UserText("follow-up from attempt 1", 0)); err != nil {
				return agent.ToolResult{}, err
			}
			go func() {
				<-r.second
				r.late <- c.Run.Steer(context.Background(), agent.UserText("late from attempt 1", 0))
			}()
			r.between()
			return agent.ToolResult{}, tools.Fault(errors.New("disk hiccup"))
		}
		close(r.second)
		if err := <-r.late; err != nil {
			return agent.ToolResult{}, err
		}
		return agent.TextResult("queued"), nil
	})
}

// A call whose execute activity runs twice keeps the messages of its
// latest attempt only (what an earlier attempt queued before or after it), in sequential mode (messages go straight to the
// queue) and in a parallel batch (messages are held for pi's order while a
// sibling runs); a person's message is not touched. pi runs a call once, so
// it queues one steering message and no follow-up.
func TestRetriedCallKeepsItsLatestAttemptsMessages(t *testing.T) {
	for _, mode := range []agent.ExecutionMode{agent.ExecutionSequential, agent.ExecutionParallel} {
		t.Run(string(mode), func(t *testing.T) {
			var h *harness
			var run client.WorkflowRun
			personErr := make(chan error, 1)
			q := &retriedQueuer{attempts: map[string]int{}, second: make(chan struct{}), late: make(chan error, 1)}
			q.between = func() {
				_, err := update(t, h.c, run, agentapi.UpdateSteer, map[string]any{"content": "steer from a person"})
				personErr <- err
			}
			sibling := tool("sibling", func(ctx context.Context, c tools.Call) (agent.ToolResult, error) {
				// Outlasts the queuer's retry (1 s), so the batch holds
				// the first attempt's messages until the second's arrive.
				select {
				case <-time.After(3 * time.Second):
				case <-ctx.Done():
				}
				return agent.TextResult("sibling done"), nil
			})
			calls := []agent.Content{call("c1", "queuer")}
			if mode == agent.ExecutionParallel {
				calls = append(calls, call("c2", "sibling"))
			}
			h = newHarness(t, []llmResponse{answer(calls...), answer(text("steered")), answer(text("never: no follow-up"))},
				q.tool(), sibling)
			in := h.input("go", "queuer", "sibling")
			in.ToolExecution = mode
			in.EventOrderWindow = "1m"       // hold until every sibling ends
			in.SteeringMode = agent.QueueAll // one turn takes every steering message
			run = h.start(in)
			res := h.result(run)
			require.Equal(t, agent.StopReasonStop, res.StopReason, res.ErrorMessage)
			require.NoError(t, <-personErr)

			var users []string
			for _, m := range res.Messages {
				if m.Role == agent.RoleUser {
					users = append(users, agent.TextOf(m.Content))
				}
			}
			require.Equal(t, []string{"go", "steer from a person", "steer from attempt 2"}, users,
				"the first attempt's messages, early and late, are gone; the person's stays, in arrival order")
			require.Equal(t, "steered", agent.TextOf(lastMessage(res).Content))
			require.Equal(t, 2, res.Turns, "no follow-up turn")

			hist, err := testenv.History(context.Background(), h.c, run.GetID(), run.GetRunID())
			require.NoError(t, err)
			require.Equal(t, 1, markers(hist, "tool-messages-of-one-attempt"), "the change is marked in the retried call's history")
		})
	}
}

// markers counts the version markers of a change in a history.
func markers(h *historypb.History, change string) int {
	n := 0
	for _, ev := range h.GetEvents() {
		if a := ev.GetMarkerRecordedEventAttributes(); a != nil && strings.Contains(a.GetDetails()["change-id"].String(), change) {
			n++
		}
	}
	return n
}
