package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/llm"
)

// sessionDriver does what a client of one session does: start it, send
// its prompts one after another (each once its predecessor's run has
// ended and its time has come, so that the prompts spread over the
// chaos), and follow its whole event log with one agentclient.Watch across
// continue-as-new.
type sessionDriver struct {
	s  *soak
	id string
	ws string

	mu      sync.Mutex
	events  []agent.Event // what the live watcher saw, in order
	ends    chan struct{} // one per agent_end
	latency []time.Duration
	// stopped says why the driver gave up, when it did.
	stopped string
	// watchRestarts counts watches that ended with an error and were
	// started again after the last event seen; updateRetries counts
	// prompt Updates sent again after an error.
	watchRestarts, updateRetries int
}

func (s *soak) newDriver(i int) *sessionDriver {
	id := fmt.Sprintf("soak-%03d", i)
	return &sessionDriver{s: s, id: id, ws: filepath.Join(s.dir, "ws", id), ends: make(chan struct{}, s.o.Prompts+8)}
}

func (d *sessionDriver) stop(format string, args ...any) {
	d.mu.Lock()
	d.stopped = fmt.Sprintf(format, args...)
	d.mu.Unlock()
	d.s.logf("session %s: %s", d.id, d.stopped)
}

func (d *sessionDriver) run(ctx context.Context) {
	if err := os.MkdirAll(d.ws, 0o755); err != nil {
		d.stop("workspace: %v", err)
		return
	}
	if err := d.start(ctx); err != nil {
		d.stop("start: %v", err)
		return
	}
	wctx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		d.watch(wctx)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()
	o := d.s.o
	interval := o.Duration / time.Duration(o.Prompts)
	deadline := d.s.began.Add(o.Duration + o.Drain)
	for k := 1; k <= o.Prompts; k++ {
		// Prompt k is due in the k-th interval, at a point of its own
		// for each session, so the prompts spread over the chaos.
		at := d.s.began.Add(interval*time.Duration(k-1) + time.Duration(hash(d.id)%1000)*interval/1000)
		select {
		case <-ctx.Done():
			d.stop("cancelled before prompt %d", k)
			return
		case <-time.After(time.Until(at)):
		}
		t := time.Now()
		if err := d.prompt(ctx, k, deadline); err != nil {
			d.stop("prompt %d: %v", k, err)
			return
		}
		select {
		case <-d.ends:
		case <-time.After(time.Until(deadline)):
			d.stop("prompt %d: no agent_end by the deadline (%v after the chaos ended)", k, o.Drain)
			return
		case <-ctx.Done():
			d.stop("cancelled waiting for prompt %d", k)
			return
		}
		d.mu.Lock()
		d.latency = append(d.latency, time.Since(t))
		d.mu.Unlock()
	}
}

func hash(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// config is a session's configuration: the soak model, bash and write,
// its own workspace.
func (d *sessionDriver) config() agent.LoopConfig {
	return agent.LoopConfig{
		Model:        agent.ModelRef{Provider: llm.OpenAICompatibleProviderName, ID: ModelID},
		Tools:        []string{"bash", "write"},
		Workspace:    d.ws,
		SystemPrompt: "You record each prompt in the ledger.",
	}
}

// start starts the session, again while the server does not answer.
func (d *sessionDriver) start(ctx context.Context) error {
	return d.retry(ctx, time.Now().Add(5*time.Minute), func(ctx context.Context) error {
		_, err := d.s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: d.id, TaskQueue: d.s.queue}, agentapi.SessionWorkflow,
			agentapi.SessionInput{LoopConfig: d.config(), ContinueAsNewAfterTurns: d.s.o.ContinueAsNewAfterTurns})
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil // an earlier attempt started it
		}
		return err
	})
}

// prompt sends prompt k with a stable Update ID, again after an error
// unless the event log shows that an earlier attempt was applied.
func (d *sessionDriver) prompt(ctx context.Context, k int, deadline time.Time) error {
	first := true
	return d.retry(ctx, deadline, func(ctx context.Context) error {
		if !first {
			d.mu.Lock()
			d.updateRetries++
			d.mu.Unlock()
			if d.sawPrompt(k) {
				return nil
			}
		}
		first = false
		h, err := d.s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID:   d.id,
			UpdateID:     fmt.Sprintf("%s-prompt-%d", d.id, k),
			UpdateName:   agentapi.UpdatePrompt,
			Args:         []any{agentapi.PromptRequest{Text: promptText(d.id, k)}},
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			var rs agentapi.RunStatus
			err = h.Get(ctx, &rs)
		}
		return err
	})
}

// retry calls f with a 30 s deadline until it succeeds or deadline passes.
func (d *sessionDriver) retry(ctx context.Context, deadline time.Time, f func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := f(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// sawPrompt says whether the live log holds prompt k's user message.
func (d *sessionDriver) sawPrompt(k int) bool {
	want := promptText(d.id, k)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ev := range d.events {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser && agent.TextOf(ev.Message.Content) == want {
			return true
		}
	}
	return false
}

// watch follows the session's whole event log until ctx ends, starting a
// new Watch after the last event seen when one fails for good.
func (d *sessionDriver) watch(ctx context.Context) {
	for ctx.Err() == nil {
		d.mu.Lock()
		var after int64
		if n := len(d.events); n > 0 {
			after = d.events[n-1].Seq
		}
		d.mu.Unlock()
		err := agentclient.Watch(ctx, d.s.c, d.id, "", agentclient.WatchOptions{After: after}, func(ev agent.Event) {
			d.mu.Lock()
			d.events = append(d.events, ev)
			d.mu.Unlock()
			if ev.Type == agent.EventAgentEnd {
				d.ends <- struct{}{}
			}
		})
		if ctx.Err() != nil {
			return
		}
		d.mu.Lock()
		d.watchRestarts++
		d.mu.Unlock()
		d.s.logf("session %s: watch ended (%v); watching again after event %d", d.id, err, after)
		time.Sleep(time.Second)
	}
}
