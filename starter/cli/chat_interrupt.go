package cli

import (
	"context"
	"fmt"
	"sync"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentclient"
)

// chatState is what the chat knows of its session from the events: whether
// a run is going, and what Ctrl-C did since it started.
type chatState struct {
	mu      sync.Mutex
	running bool
	presses int    // Ctrl-C (or Esc) presses during this run
	how     string // how the chat ended: "left" or "detached"
}

// saw notes a run starting or ending; at the end it prints the run's
// status line and the prompt marker.
func (c *chatState) saw(e *env, ev agent.Event) {
	switch ev.Type {
	case agent.EventAgentStart:
		c.mu.Lock()
		c.running, c.presses = true, 0
		c.mu.Unlock()
	case agent.EventAgentEnd:
		c.mu.Lock()
		c.running, c.presses = false, 0
		c.mu.Unlock()
		e.runStatus(ev)
		e.promptMarker()
	}
}

func (c *chatState) isRunning() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.running
}

// onInterrupt is the chat's Ctrl-C: while a run is going the first aborts
// it and the second detaches; while idle it leaves the chat.
func (c *chatState) onInterrupt(e *env, ctx context.Context, id string, end context.CancelFunc) func() {
	return func() {
		c.mu.Lock()
		running, presses := c.running, c.presses
		c.mu.Unlock()
		switch {
		case running && presses == 0:
			c.abort(e, ctx, id)
			return
		case running:
			c.end("detached", end)
		default:
			c.end("left", end)
		}
	}
}

func (c *chatState) end(how string, cancel context.CancelFunc) {
	c.mu.Lock()
	c.how = how
	c.mu.Unlock()
	cancel()
}

// abort sends the abort Update in the background: with no worker it waits,
// and a second Ctrl-C must still be able to detach.
func (c *chatState) abort(e *env, ctx context.Context, id string) {
	c.mu.Lock()
	c.presses++
	running := c.running
	c.mu.Unlock()
	if !running {
		fmt.Fprintln(e.out, "nothing is running")
		return
	}
	fmt.Fprintf(e.out, "\nAborting the run (Ctrl-C again to detach and leave it running)\n")
	go func() {
		if _, err := agentclient.Abort(ctx, e.c, id, "interrupted (Ctrl-C)"); err != nil && ctx.Err() == nil {
			fmt.Fprintln(e.out, "abort:", refusal(err))
		}
	}()
}

// left says how to come back to the session the chat leaves.
func (c *chatState) left(e *env, id string) error {
	c.mu.Lock()
	how := c.how
	c.mu.Unlock()
	if how == "detached" {
		e.detachedHelp(id, true)
		return exitError{code: ExitDetached}
	}
	fmt.Fprintf(e.out, "\nLeft the chat; %s waits for its next prompt. Come back: starter session chat %s\n", id, id)
	return nil
}
