package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/store"
)

// sessionOutcome is what a client saw of one session.
type sessionOutcome struct {
	id          string
	answered    int
	outputs     int   // tool results seen, resolved from the store
	outputBytes int64 // their text
	odd         int   // tool results that were not contentOutput characters
	wall        time.Duration
}

// driveSession does what the README tells a user to do: start an
// AgentSession, send one prompt Update after another, and follow the whole
// chain of runs with one agentclient.Watch (resolving stubs from the store),
// each prompt waiting for its run's agent_end. The session continues as new
// only when the server suggests it.
func driveSession(ctx context.Context, c client.Client, st store.Blobs, queue, id string, prompts int, w *workerProc, progress func(int)) (sessionOutcome, error) {
	out := sessionOutcome{id: id}
	start := time.Now()
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, agentapi.SessionWorkflow,
		agentapi.SessionInput{LoopConfig: contentConfig("content")})
	if err != nil {
		return out, err
	}
	var mu sync.Mutex
	ends := make(chan struct{}, prompts+1)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	watchErr := make(chan error, 1)
	go func() {
		watchErr <- agentclient.Watch(wctx, c, id, "", agentclient.WatchOptions{Store: st}, func(ev agent.Event) {
			switch ev.Type {
			case agent.EventToolExecutionEnd:
				n := 0
				if ev.Result != nil {
					n = len(agent.TextOf(ev.Result.Content))
				}
				mu.Lock()
				out.outputs++
				out.outputBytes += int64(n)
				if n != contentOutput {
					out.odd++
				}
				mu.Unlock()
			case agent.EventAgentEnd:
				ends <- struct{}{}
			}
		})
	}()
	for i := 1; i <= prompts; i++ {
		var rs agentapi.RunStatus
		req := agentapi.PromptRequest{Text: fmt.Sprintf("Prompt %d: print some random data.", i)}
		if err := agentclient.Update(ctx, c, id, agentapi.UpdatePrompt, req, &rs); err != nil {
			return out, fmt.Errorf("prompt %d: %w", i, err)
		}
		select {
		case <-ends:
		case err := <-watchErr:
			return out, fmt.Errorf("watch of %s ended at prompt %d: %v", id, i, err)
		case <-w.done:
			return out, fmt.Errorf("prompt %d of %s: %w", i, id, w.exited())
		case <-time.After(contentPromptTimeout):
			return out, fmt.Errorf("prompt %d of %s: no agent_end after %v", i, id, contentPromptTimeout)
		case <-ctx.Done():
			return out, ctx.Err()
		}
		mu.Lock()
		out.answered = i
		mu.Unlock()
		if progress != nil {
			progress(i)
		}
	}
	out.wall = time.Since(start)
	stop()
	mu.Lock()
	defer mu.Unlock()
	return out, nil
}

// benchLongSession is one session of many prompts on the real worker.
func benchLongSession(ctx context.Context, e *contentEnv, prompts int) (bool, error) {
	queue := fmt.Sprintf("content-session-%d", time.Now().UnixNano())
	w, err := e.startRealWorker(ctx, queue)
	if err != nil {
		return false, err
	}
	defer w.stop()
	id := queue
	out, err := driveSession(ctx, e.c, e.st, queue, id, prompts, w, func(i int) {
		if i%100 == 0 {
			progressf("%d prompts answered, %d model requests, largest %s", i, e.model.requests.Load(), mbs(e.model.maxBody.Load()))
		}
	})
	if err != nil {
		return false, err
	}
	defer func() { _ = e.c.TerminateWorkflow(context.WithoutCancel(ctx), id, "", "bench over") }()
	ch, err := measureChain(ctx, e.c, id)
	if err != nil {
		return false, err
	}
	sc, err := measureScope(e.storeDir, id)
	if err != nil {
		return false, err
	}
	peak, hwm, _ := w.memory()

	line("session", "%s on task queue %s (real worker binary)", id, queue)
	line("prompts answered", "%d of %d", out.answered, prompts)
	line("wall time", "%v (%v a prompt)", out.wall.Round(time.Second), (out.wall / time.Duration(max(1, out.answered))).Round(time.Millisecond))
	printChain(ch)
	line("tool output", "%s: %d outputs, %d not %d characters", mbs(out.outputBytes), out.outputs, out.odd, contentOutput)
	ratio := float64(sc.bytes) / float64(max(1, out.outputBytes))
	line("store, session's scope", "%s on disk in %d objects: %.2fx the tool output", mbs(sc.bytes), sc.objects, ratio)
	line("store objects of an output", "%d, holding %d distinct outputs, each in at most %d object(s)", sc.outputObjects, len(sc.copies), sc.maxCopies())
	line("worker memory", "peak RSS %s sampled, VmHWM %s", mbs(peak), mbs(hwm))
	line("model requests", "%d, the largest %s", e.model.requests.Load(), mbs(e.model.maxBody.Load()))
	ok := verdict(out.answered == prompts && out.odd == 0, "every prompt answered with its 48,000-character output (%d of %d)", out.answered, prompts)
	ok = verdict(ch.bytes < contentHistoryBudget, "history of all runs < %s (%s)", mbs(contentHistoryBudget), mbs(ch.bytes)) && ok
	ok = verdict(ch.largest.bytes <= contentRunBudget, "no run > %s (largest %s)", mbs(contentRunBudget), mbs(ch.largest.bytes)) && ok
	ok = verdict(ch.failed == 0, "no workflow task failure (%d)", ch.failed) && ok
	ok = verdict(ratio <= contentStoreBudget, "store bytes <= %.1fx content (%.2fx)", contentStoreBudget, ratio) && ok
	return ok, nil
}

// printChain prints a chain's runs, history and workflow task failures.
func printChain(ch chainStat) {
	line("runs in the chain", "%d", len(ch.runs))
	line("history, all runs", "%s (%d bytes), %d events (server's figures)", mbs(ch.bytes), ch.bytes, ch.events)
	line("largest run", "%s, %d events (run %s)", mbs(ch.largest.bytes), ch.largest.events, ch.largest.runID)
	failures := fmt.Sprintf("%d (workflow task timeouts: %d)", ch.failed, ch.timedOut)
	if ch.failure != "" {
		failures += "; first: " + ch.failure
	}
	line("workflow task failures", "%s", failures)
}

// benchManySessions runs sessions concurrently on one real worker and
// samples its memory.
func benchManySessions(ctx context.Context, e *contentEnv, sessions, prompts int) (bool, error) {
	queue := fmt.Sprintf("content-many-%d", time.Now().UnixNano())
	w, err := e.startRealWorker(ctx, queue)
	if err != nil {
		return false, err
	}
	defer w.stop()
	start := time.Now()
	outs := make([]sessionOutcome, sessions)
	errs := make([]error, sessions)
	var answered sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := range sessions {
		answered.Add(1)
		go func() {
			defer answered.Done()
			id := fmt.Sprintf("%s-%d", queue, i)
			outs[i], errs[i] = driveSession(ctx, e.c, e.st, queue, id, prompts, w, func(int) {
				mu.Lock()
				defer mu.Unlock()
				total++
				if total%200 == 0 {
					peak, _, _ := w.memory()
					progressf("%d of %d prompts answered, worker RSS peak %s", total, sessions*prompts, mbs(peak))
				}
			})
		}()
	}
	answered.Wait()
	wall := time.Since(start)
	peak, hwm, samples := w.memory()
	defer func() {
		for _, o := range outs {
			_ = e.c.TerminateWorkflow(context.WithoutCancel(ctx), o.id, "", "bench over")
		}
	}()
	var all chainStat
	n := 0
	for i, o := range outs {
		if errs[i] != nil {
			return false, fmt.Errorf("session %d: %w", i, errs[i])
		}
		n += o.answered
		ch, err := measureChain(ctx, e.c, o.id)
		if err != nil {
			return false, err
		}
		all.runs = append(all.runs, ch.runs...)
		all.bytes += ch.bytes
		all.events += ch.events
		all.failed += ch.failed
		all.timedOut += ch.timedOut
		if ch.largest.bytes > all.largest.bytes {
			all.largest = ch.largest
		}
		if all.failure == "" {
			all.failure = ch.failure
		}
	}
	line("prompts answered", "%d of %d (%d sessions x %d)", n, sessions*prompts, sessions, prompts)
	line("wall time", "%v", wall.Round(time.Second))
	printChain(all)
	line("worker RSS", "peak %s (VmRSS sampled every second, %d samples)", mbs(peak), samples)
	line("worker peak RSS (VmHWM)", "%s", mbs(hwm))
	ok := verdict(n == sessions*prompts, "every prompt answered (%d of %d)", n, sessions*prompts)
	ok = verdict(all.failed == 0, "no workflow task failure (%d)", all.failed) && ok
	ok = verdict(hwm < contentMemoryBudget, "worker peak RSS < 1 GB (VmHWM %s)", mbs(hwm)) && ok
	return ok, nil
}
