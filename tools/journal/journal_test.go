package journal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	j, err := journal.Open(t.TempDir())
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

// shutdown is a worker shutdown's context cause, as activities makes it.
type shutdown struct{}

func (shutdown) Error() string        { return "worker shutting down" }
func (shutdown) WorkerShutdown() bool { return true }

// A call stopped by its worker's shutdown is journaled as interrupted, not
// as a completed error result, whether the tool says so (bash) or only
// returns an error once its context ends; a run's abort is an outcome.
func TestJournalRecordsInterruptedCalls(t *testing.T) {
	j, err := journal.Open(t.TempDir())
	require.NoError(t, err)
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(shutdown{})
	for key, inner := range map[string]*countingTool{
		"says-so":  {err: tools.Interrupted(shutdown{})},
		"errs-out": {err: errors.New("Operation aborted")},
	} {
		tool := &journal.Journaled{Tool: inner, Journal: j}
		_, err := tool.Execute(ctx, tools.Call{IdempotencyKey: key})
		require.True(t, tools.IsInterrupted(err), key)
		out, err := j.LookupToolOutcome(context.Background(), journal.LookupInput{Key: key})
		require.NoError(t, err)
		require.Equal(t, journal.StateInterrupted, out.State, key)
	}

	aborted, cancelAbort := context.WithCancel(context.Background())
	cancelAbort()
	tool := &journal.Journaled{Tool: &countingTool{err: errors.New("Command aborted")}, Journal: j}
	_, err = tool.Execute(aborted, tools.Call{IdempotencyKey: "aborted"})
	require.EqualError(t, err, "Command aborted")
	out, err := j.LookupToolOutcome(context.Background(), journal.LookupInput{Key: "aborted"})
	require.NoError(t, err)
	require.Equal(t, journal.StateCompleted, out.State, "an abort is the call's outcome")
}

// Pruning bounds the journal by age and by size, oldest first, and never
// removes a record younger than MinAge, which a lost attempt's lookup may
// still ask for.
func TestJournalPruneBoundsAgeAndSize(t *testing.T) {
	j, err := journal.Open(t.TempDir())
	require.NoError(t, err)
	now := time.Now()
	write := func(key string, age time.Duration) {
		t.Helper()
		big := agent.TextResult(strings.Repeat("x", 1000))
		require.NoError(t, j.Store(journal.Record{Key: key, State: journal.StateCompleted, Result: big}))
		r, ok, err := j.Load(key)
		require.NoError(t, err)
		require.True(t, ok)
		files, _ := filepath.Glob(filepath.Join(j.Dir, "*.json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if strings.Contains(string(b), `"key":"`+r.Key+`"`) {
				require.NoError(t, os.Chtimes(f, now.Add(-age), now.Add(-age)))
			}
		}
	}
	keys := func() []string {
		rs, err := j.Records()
		require.NoError(t, err)
		var out []string
		for _, r := range rs {
			out = append(out, r.Key)
		}
		slices.Sort(out)
		return out
	}
	write("day-old", 25*time.Hour)
	write("hour-old", time.Hour)
	write("half-hour-old", 30*time.Minute)
	write("fresh", time.Second)

	st, err := j.PruneTo(journal.Limits{MaxAge: 24 * time.Hour, MinAge: journal.DefaultMinAge})
	require.NoError(t, err)
	require.Equal(t, 1, st.Removed)
	require.Equal(t, []string{"fresh", "half-hour-old", "hour-old"}, keys())

	// Each record is a little over 1 KB: a 2.5 KB bound keeps the two
	// newest.
	st, err = j.PruneTo(journal.Limits{MaxBytes: 2500, MinAge: journal.DefaultMinAge})
	require.NoError(t, err)
	require.Equal(t, 1, st.Removed)
	require.Equal(t, []string{"fresh", "half-hour-old"}, keys())
	require.LessOrEqual(t, st.KeptBytes, int64(2500))

	// A bound nothing can meet stops at records younger than MinAge.
	st, err = j.PruneTo(journal.Limits{MaxBytes: 1, MinAge: journal.DefaultMinAge})
	require.NoError(t, err)
	require.Equal(t, []string{"fresh"}, keys(), "a record a lookup may still need stays")
	require.Equal(t, 1, st.Kept)
}
