package activities

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
)

// recordingSender is a sender whose signals are recorded in the list it
// returns, read under the mutex it returns; its loop is not started.
func recordingSender() (*updateSender, *[]agentapi.ToolUpdate, *sync.Mutex) {
	u := newUpdateQueue("call", 1, time.Now())
	var mu sync.Mutex
	var got []agentapi.ToolUpdate
	u.offload = func(update agentapi.ToolUpdate) agentapi.ToolUpdate { return update }
	u.signal = func(update agentapi.ToolUpdate) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, update)
	}
	return u, &got, &mu
}

// requireInOrder checks that the updates' partial results come in order
// and that the last of them is partial(last).
func requireInOrder(t *testing.T, updates []agentapi.ToolUpdate, last int) {
	t.Helper()
	seen := -1
	for _, update := range updates {
		for _, r := range update.Results {
			idx := partialIndex(t, r)
			require.Greater(t, idx, seen)
			seen = idx
		}
	}
	require.Equal(t, last, seen)
}

// deferringSender is a running recordingSender allowed to defer, watched
// as *watched says.
func deferringSender(watched *atomic.Bool) (*updateSender, *[]agentapi.ToolUpdate, *sync.Mutex) {
	u, got, mu := recordingSender()
	u.deferOK, u.watched = true, watched.Load
	go u.loop()
	return u, got, mu
}

// Nobody watching, a call that may defer signals nothing: what the policy
// would have signalled comes back for the result, the same updates in the
// same order.
func TestUnwatchedUpdatesComeWithTheResult(t *testing.T) {
	var watched atomic.Bool
	u, got, mu := deferringSender(&watched)
	for i := 0; i < 40; i++ {
		u.send(partial(i))
	}
	u.close(context.Background())
	mu.Lock()
	require.Empty(t, *got, "no signal while nobody watches")
	mu.Unlock()
	kept := u.takeKept()
	require.NotEmpty(t, kept)
	requireInOrder(t, kept, 39) // the last partial result before the end is kept
}

// When a watcher comes, what was kept goes first, then the rest, all as
// signals, in order; nothing is left for the result.
func TestWatcherComingSignalsWhatWasKept(t *testing.T) {
	var watched atomic.Bool
	u, got, mu := deferringSender(&watched)
	for i := 0; i < 5; i++ {
		u.send(partial(i))
	}
	require.Eventually(t, func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.pending) == 0 && len(u.kept) > 0
	}, 10*time.Second, time.Millisecond, "the sender kept the first updates")
	watched.Store(true)
	for i := 5; i < 10; i++ {
		u.send(partial(i))
	}
	u.close(context.Background())
	require.Empty(t, u.takeKept())
	mu.Lock()
	defer mu.Unlock()
	requireInOrder(t, *got, 9)
}

// What a call keeps for its result stays under maxDeferredBytes, the
// oldest dropped and counted.
func TestKeptUpdatesAreBounded(t *testing.T) {
	u := newUpdateQueue("call", 1, time.Now())
	u.deferOK = true
	u.signal = func(agentapi.ToolUpdate) { t.Fatal("no signal while nobody watches") }
	big := agent.TextResult(strings.Repeat("x", 2000))
	for range 400 {
		u.sink(agentapi.ToolUpdate{ToolCallID: "call", Results: []agent.ToolResult{big}})
	}
	kept := u.takeKept()
	require.LessOrEqual(t, jsonLen(kept), maxDeferredBytes+4096)
	require.Less(t, len(kept), 400)
	require.Equal(t, 400-len(kept), kept[0].Dropped, "the dropped updates are counted")
}
