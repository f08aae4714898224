package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
)

// Suffix returns 12 random hex digits for workflow ids and task queues:
// tests share one server, so every name they make must be their own.
func Suffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Start starts an AgentLoop run on queue under a fresh id with prefix. The
// input is any value, so that tests can send what a careless client would.
func Start(t testing.TB, c client.Client, queue, prefix string, in any) client.WorkflowRun {
	t.Helper()
	run, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: prefix + Suffix(), TaskQueue: queue,
	}, agentapi.AgentLoopWorkflow, in)
	if err != nil {
		t.Fatalf("start a run on %s: %v", queue, err)
	}
	return run
}

// Result waits up to timeout for an AgentLoop run, which must complete.
func Result(t testing.TB, run client.WorkflowRun, timeout time.Duration) agentapi.AgentLoopResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res agentapi.AgentLoopResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatalf("run %s did not complete: %v", run.GetID(), err)
	}
	if st := resolver(); st != nil {
		ms, err := agentclient.ResolveMessages(ctx, st, res.Messages)
		if err != nil {
			t.Fatalf("result of run %s: %v", run.GetID(), err)
		}
		res.Messages = ms
	}
	return res
}

// Events follows a run's event log to its end, for at most a minute.
func Events(t testing.TB, c client.Client, run client.WorkflowRun) []agent.Event {
	t.Helper()
	// The events of a closed run come from a Query, which a worker answers
	// by replaying the run's history: seconds on an idle machine for a run
	// with megabytes of arguments, over a minute with three test suites on
	// two cores. Only a hang reaches the guard.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var all []agent.Event
	o := agentclient.WatchOptions{Store: resolver()}
	if err := agentclient.Watch(ctx, c, run.GetID(), run.GetRunID(), o, func(e agent.Event) { all = append(all, e) }); err != nil {
		t.Fatalf("events of run %s: %v", run.GetID(), err)
	}
	return all
}
