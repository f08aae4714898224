package journal_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/tools"
	"github.com/durable-agents/agentloop/tools/journal"
)

type countingTool struct {
	runs   int
	result agent.ToolResult
	err    error
}

func (c *countingTool) Definition() tools.Definition {
	return tools.Definition{Name: "count", Durability: tools.Durability{MaxAttempts: 1}}
}

func (c *countingTool) Execute(context.Context, tools.Call) (agent.ToolResult, error) {
	c.runs++
	return c.result, c.err
}

// The journal without a server: outcomes are recorded under the idempotency
// key before Execute returns, a completed key is never run again, and the
// lookup activity reports unknown, started and completed keys.
func TestJournalRecordsOutcomesByIdempotencyKey(t *testing.T) {
	j, err := journal.OpenJournal(t.TempDir())
	require.NoError(t, err)
	ctx := context.Background()
	inner := &countingTool{result: agent.TextResult("ok")}
	tool := &journal.Journaled{Tool: inner, Journal: j}

	out, err := j.LookupToolOutcome(ctx, journal.LookupInput{Key: "wf/call-1/run/5"})
	require.NoError(t, err)
	require.Equal(t, journal.StateUnknown, out.State)

	call := tools.Call{ID: "call-1", IdempotencyKey: "wf/call-1/run/5"}
	r, err := tool.Execute(ctx, call)
	require.NoError(t, err)
	require.Equal(t, "ok", agent.TextOf(r.Content))
	out, err = j.LookupToolOutcome(ctx, journal.LookupInput{Key: call.IdempotencyKey})
	require.NoError(t, err)
	require.Equal(t, journal.StateCompleted, out.State)
	require.Equal(t, "ok", agent.TextOf(out.Result.Content))
	require.False(t, out.IsError)

	r, err = tool.Execute(ctx, call)
	require.NoError(t, err)
	require.Equal(t, "ok", agent.TextOf(r.Content))
	require.Equal(t, 1, inner.runs, "a completed key returns the record without running the tool")

	failing := &journal.Journaled{Tool: &countingTool{err: errors.New("exit code 1")}, Journal: j}
	_, err = failing.Execute(ctx, tools.Call{IdempotencyKey: "k2"})
	require.EqualError(t, err, "exit code 1")
	out, err = j.LookupToolOutcome(ctx, journal.LookupInput{Key: "k2"})
	require.NoError(t, err)
	require.Equal(t, journal.StateCompleted, out.State)
	require.True(t, out.IsError)
	require.Equal(t, "exit code 1", agent.TextOf(out.Result.Content))

	// A fault is not an outcome: the key stays started (it may have had
	// effects), and a lost worker's call would be reported as lost.
	faulty := &journal.Journaled{Tool: &countingTool{err: tools.Fault(errors.New("disk"))}, Journal: j}
	_, err = faulty.Execute(ctx, tools.Call{IdempotencyKey: "k3"})
	require.True(t, tools.IsFault(err))
	out, err = j.LookupToolOutcome(ctx, journal.LookupInput{Key: "k3"})
	require.NoError(t, err)
	require.Equal(t, journal.StateStarted, out.State)

	require.NoError(t, j.Prune(time.Now().Add(time.Hour)))
	rs, err := j.Records()
	require.NoError(t, err)
	require.Empty(t, rs)
}
