package activities

// Unit tests of the policy that decides which partial results of a running
// tool go into history (signals.go) and what its heartbeat carries
// (toolprogress.go). Time is simulated: the tests drive the sender's
// decisions with the instants they choose, so they assert what the policy
// guarantees, not how fast a machine is.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/store"
)

// partial is the i-th partial result of a simulated tool: its whole output
// so far would be too big to matter here, so it says which one it is.
func partial(i int) agent.ToolResult { return agent.TextResult("partial " + strconv.Itoa(i)) }

func partialIndex(t *testing.T, r agent.ToolResult) int {
	t.Helper()
	i, err := strconv.Atoi(strings.TrimPrefix(agent.TextOf(r.Content), "partial "))
	require.NoError(t, err)
	return i
}

type sentSignal struct {
	at     time.Time
	update agentapi.ToolUpdate
}

// simulate feeds n partial results, one every step from the call's start,
// into a sender whose signals take no time, wakes it when the policy asks
// to be woken, closes it after the last one and returns the signals.
func simulate(n int, step time.Duration) []sentSignal {
	start := time.Unix(1_000_000, 0)
	u := newUpdateQueue("call", 1, start)
	var sent []sentSignal
	var wakeAt time.Time // zero: the policy waits for news
	drain := func(now time.Time) {
		for {
			update, ok, wait, _ := u.next(now)
			if !ok {
				wakeAt = time.Time{}
				if wait > 0 {
					wakeAt = now.Add(wait)
				}
				return
			}
			sent = append(sent, sentSignal{at: now, update: update})
		}
	}
	for i := 0; i < n; i++ {
		at := time.Duration(i) * step
		for !wakeAt.IsZero() && !wakeAt.After(start.Add(at)) {
			drain(wakeAt)
		}
		u.sendAt(partial(i), at)
		drain(start.Add(at))
	}
	u.finish()
	drain(start.Add(time.Duration(n) * step))
	return sent
}

// checkSignals checks what every sequence of signals must be: partial
// results in order with growing offsets, each one either signalled or
// counted as dropped, the burst first, then one partial result at a time at
// least slowSignalInterval apart, and the final partial result last.
func checkSignals(t *testing.T, sent []sentSignal, n int) {
	t.Helper()
	require.LessOrEqual(t, len(sent), maxSignalsPerCall)
	t.Logf("%d partial results: %d signals", n, len(sent))
	last, lastOffset, accounted := -1, time.Duration(-1), 0
	for k, s := range sent {
		u := s.update
		require.NotEmpty(t, u.Results, "signal %d", k)
		require.Len(t, u.Offsets, len(u.Results), "signal %d", k)
		require.LessOrEqual(t, len(u.Results), maxPendingUpdates, "signal %d", k)
		if k >= burstSignals {
			require.Len(t, u.Results, 1, "signal %d after the burst carries only the latest", k)
		}
		if k > burstSignals && k < len(sent)-1 {
			require.GreaterOrEqual(t, s.at.Sub(sent[k-1].at), slowSignalInterval, "signal %d", k)
		}
		for i, r := range u.Results {
			idx := partialIndex(t, r)
			require.Greater(t, idx, last, "signal %d: partial results out of order", k)
			require.Greater(t, u.Offsets[i], lastOffset, "signal %d: offsets must grow", k)
			last, lastOffset = idx, u.Offsets[i]
		}
		accounted += len(u.Results) + u.Dropped
	}
	require.Equal(t, n-1, last, "the last signal carries the final partial result")
	require.Equal(t, n, accounted, "every partial result is signalled or counted as dropped")
}

func TestUpdatePolicyChattyToolForMinutes(t *testing.T) {
	// 2,000 partial results every 100 ms: 200 s of bash printing.
	sent := simulate(2000, 100*time.Millisecond)
	checkSignals(t, sent, 2000)
	require.LessOrEqual(t, len(sent), burstSignals+int(200*time.Second/slowSignalInterval)+1)
	for k := 0; k < burstSignals; k++ {
		require.Len(t, sent[k].update.Results, 1, "round trips are instant here: every partial of the burst goes")
		require.Zero(t, sent[k].update.Dropped)
	}
}

func TestUpdatePolicyCapsALongRun(t *testing.T) {
	// 2,000 partial results over two hours: the cap, not the interval,
	// bounds the signals, and the end still comes.
	sent := simulate(2000, 3600*time.Millisecond)
	checkSignals(t, sent, 2000)
	require.Len(t, sent, maxSignalsPerCall)
}

func TestUpdatePolicyShortToolLosesNothing(t *testing.T) {
	// A tool that emits a few partial results and ends within the burst
	// has every one of them in history, as pi's conformance scenarios need.
	sent := simulate(10, time.Millisecond)
	checkSignals(t, sent, 10)
	var n int
	for _, s := range sent {
		n += len(s.update.Results)
		require.Zero(t, s.update.Dropped)
	}
	require.Equal(t, 10, n)
}

func TestUpdatePolicyBurstKeepsTheLatestSixteen(t *testing.T) {
	// Partial results that come faster than round trips pile up; a signal
	// carries the newest maxPendingUpdates and counts the rest.
	u := newUpdateQueue("call", 1, time.Unix(0, 0))
	for i := 0; i < 40; i++ {
		u.sendAt(partial(i), time.Duration(i)*time.Millisecond)
	}
	update, ok, _, _ := u.next(time.Unix(1, 0))
	require.True(t, ok)
	require.Len(t, update.Results, maxPendingUpdates)
	require.Equal(t, 24, partialIndex(t, update.Results[0]))
	require.Equal(t, 24, update.Dropped)
}

// TestUpdateSenderLoopDeliversInOrder runs the sender's own loop with a
// signal that records: whatever the timing, the partial results arrive in
// order and the last one before close is delivered before close returns.
func TestUpdateSenderLoopDeliversInOrder(t *testing.T) {
	u, got, mu := recordingSender()
	go u.loop()
	for i := 0; i < 300; i++ {
		u.send(partial(i))
	}
	u.close(context.Background())
	mu.Lock()
	defer mu.Unlock()
	require.LessOrEqual(t, len(*got), maxSignalsPerCall)
	requireInOrder(t, *got, 299)
}

// memBlobs is a content store in memory; fail makes every Put fail.
type memBlobs struct {
	mu   sync.Mutex
	m    map[string][]byte
	fail bool
}

func (b *memBlobs) Put(_ context.Context, scope string, data []byte) (agent.BlobRef, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return agent.BlobRef{}, errors.New("store unreachable")
	}
	if b.m == nil {
		b.m = map[string][]byte{}
	}
	sha := fmt.Sprintf("%064x", len(b.m)+1)
	b.m[sha] = data
	return agent.BlobRef{SHA256: sha, Size: len(data), Scope: scope}, nil
}

func (b *memBlobs) Get(_ context.Context, ref agent.BlobRef) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.m[ref.SHA256], nil
}

var quiet = log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

func bashLikePartial() agent.ToolResult {
	out := strings.Repeat(strings.Repeat("0", 999)+"\n", 50)
	return agent.ToolResult{Content: []agent.Content{agent.Text(out)},
		Details: json.RawMessage(`{"truncation":{"truncated":true,"totalLines":9000}}`)}
}

func TestSignalledPartialResultsAreStored(t *testing.T) {
	st := &memBlobs{}
	update := offloadUpdate(st, "wf", agentapi.ToolUpdate{ToolCallID: "call", Results: []agent.ToolResult{bashLikePartial(), partial(1)}}, quiet)
	b, err := json.Marshal(update)
	require.NoError(t, err)
	require.Less(t, len(b), 1024, "a 50 KB partial result is signalled as a stub: %s", b)
	require.NotNil(t, update.Results[0].Content[0].Blob)
	require.Equal(t, "partial 1", agent.TextOf(update.Results[1].Content), "small content stays inline")
}

func TestPartialResultsSignalledWhileTheStoreIsDownStaySmall(t *testing.T) {
	st := &memBlobs{fail: true}
	update := offloadUpdate(st, "wf", agentapi.ToolUpdate{ToolCallID: "call", Results: []agent.ToolResult{bashLikePartial()}}, quiet)
	text := agent.TextOf(update.Results[0].Content)
	require.LessOrEqual(t, len(text), store.InlineLimit)
	require.True(t, strings.HasSuffix(bashLikePartial().Content[0].Text, text), "the newest output is kept")
}

func TestHeartbeatCarriesTheTailOfABigPartialResult(t *testing.T) {
	text := strings.Repeat("x", 300<<10) + "the end"
	img := agent.Image(strings.Repeat("A", 100<<10), "image/png")
	r := tailResult(agent.ToolResult{Content: []agent.Content{img, agent.Text(text)}, Details: json.RawMessage(`{"big":"` + strings.Repeat("d", 100<<10) + `"}`)}, liveToolBytes)
	require.Len(t, r.Content, 1, "the image does not fit")
	require.True(t, strings.HasSuffix(r.Content[0].Text, "the end"))
	require.LessOrEqual(t, len(r.Content[0].Text), liveToolBytes)
	require.Nil(t, r.Details, "the details do not fit")
	require.Less(t, jsonSize(r), 2*liveToolBytes)

	small := bashLikePartial()
	require.Equal(t, small, tailResult(small, liveToolBytes), "a partial result that fits goes whole")
	require.Equal(t, "é!", tailUTF8("aé!", 3), "cut at a rune boundary")
	require.Equal(t, "!", tailUTF8("aé!", 2))
}

func TestHeartbeatSchedule(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	interval := 200 * time.Millisecond
	h := &toolHeartbeat{}

	// Without news a heartbeat goes one interval after the last, the first
	// one interval after the start: a tool done by then costs none.
	require.Equal(t, start.Add(interval), h.due(start, start, interval))
	last := start.Add(interval)
	require.Equal(t, last.Add(interval), h.due(start, last, interval))

	// News waits for the first interval, then goes ToolProgressInterval
	// after the last heartbeat.
	h.dirty = true
	require.Equal(t, start.Add(interval), h.due(start, start, interval))
	require.Equal(t, last.Add(ToolProgressInterval), h.due(start, last, interval))

	// An interval shorter than ToolProgressInterval keeps its pace.
	short := 50 * time.Millisecond
	require.Equal(t, last.Add(short), h.due(start, last, short))

	// With the liveness interval (half a 30 s heartbeat timeout), watched
	// news waits at most firstWatchedHeartbeat: a watcher sees a tool's
	// first lines within a second, not after 15 s. (With the first
	// heartbeat one liveness interval after the start, `starter run`
	// showed a 60 s command's output only when it ended, and Ctrl-C tests
	// waited for it.)
	liveness := 15 * time.Second
	require.Equal(t, start.Add(firstWatchedHeartbeat), h.due(start, start, liveness))
	h.dirty = false
	require.Equal(t, start.Add(liveness), h.due(start, start, liveness), "no news: liveness only")
}
