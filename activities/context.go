package activities

import (
	"container/list"
	"context"
	"fmt"
	"slices"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/store"
)

// turnContext is the context a model turn sends: the transcript as the
// workflow holds it (stubs for large content) and the same messages with
// every stub resolved, which is what the provider gets.
type turnContext struct {
	t        *agent.Transcript
	resolved []agent.Message
	// stored maps the SegmentsHash of segment lists known to hold the
	// first messages of t to how many they hold: the list the context was
	// loaded from and the one it was saved as. A later turn whose segments
	// are one of them may use the cached context.
	stored map[string]int
}

// storedAs records that segs hold the first messages of the context.
func (c *turnContext) storedAs(segs []agent.Segment) {
	if c.stored == nil {
		c.stored = map[string]int{}
	}
	c.stored[agent.SegmentsHash(segs)] = agent.SegmentsLen(segs)
}

// size is what the context holds in memory: the stubs and the content
// behind them, counted from the stubs' sizes (no encoding per turn).
func (c turnContext) size() int {
	n := c.t.Size()
	for _, m := range c.t.Messages {
		for _, b := range m.Content {
			if b.Blob != nil {
				n += b.Blob.Size
			}
		}
		if ref, ok := agent.DetailsBlob(m.Details); ok {
			n += ref.Size
		}
	}
	return n
}

// contextCache keeps each run's context as the model-turn activity last saw
// it, so a turn reads nothing from the store when this worker ran the
// previous one. It is bounded by runs and by bytes; a miss costs reading
// the transcript's segments from the store, never correctness. An entry
// answers a turn whose segments are ones it was loaded from or saved as
// (by SegmentsHash): content-addressed, they hold exactly its messages.
type contextCache struct {
	mu       sync.Mutex
	maxRuns  int
	maxBytes int
	bytes    int
	order    *list.List // of *cacheEntry, most recent first
	byRun    map[string]*list.Element
}

type cacheEntry struct {
	run   string
	c     turnContext
	bytes int
}

func newContextCache(maxRuns, maxBytes int) *contextCache {
	return &contextCache{maxRuns: maxRuns, maxBytes: maxBytes, order: list.New(), byRun: map[string]*list.Element{}}
}

// prefix returns a copy of the cached first n messages of run if the
// segments whose SegmentsHash is stored hold them.
func (c *contextCache) prefix(run string, n int, stored string) (turnContext, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byRun[run]
	if !ok {
		return turnContext{}, false
	}
	e := el.Value.(*cacheEntry)
	if held, ok := e.c.stored[stored]; !ok || held != n || e.c.t.Len() < n {
		return turnContext{}, false
	}
	c.order.MoveToFront(el)
	return turnContext{t: e.c.t.Prefix(n), resolved: append([]agent.Message(nil), e.c.resolved[:n]...),
		stored: map[string]int{stored: n}}, true
}

// put stores a run's context, evicting the least recently used runs.
func (c *contextCache) put(run string, tc turnContext) {
	size := tc.size()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byRun[run]; ok {
		c.bytes -= el.Value.(*cacheEntry).bytes
		c.order.Remove(el)
		delete(c.byRun, run)
	}
	if size > c.maxBytes {
		return
	}
	c.byRun[run] = c.order.PushFront(&cacheEntry{run: run, c: tc, bytes: size})
	c.bytes += size
	for c.order.Len() > c.maxRuns || c.bytes > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*cacheEntry)
		c.bytes -= e.bytes
		c.order.Remove(last)
		delete(c.byRun, e.run)
	}
}

// loadContext rebuilds the context a model turn must send: the prefix the
// segments hold, from the cache or from the store, then the delta.
//
// The prefix is identified by its segments, which are content-addressed,
// not by ref.BaseHash: that hash is the workflow's chain over its own
// build's encoding of the messages (agent.Transcript), which a deploy that
// changes a message type changes. Only workers of earlier builds check it.
func (a *Activities) loadContext(ctx context.Context, ref ContextRef) (turnContext, error) {
	if agent.SegmentsLen(ref.Segments) != ref.BaseLen {
		// The workflow builds BaseLen from the same list: only a bug or
		// a forged input gets here.
		return turnContext{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the context's segments hold %d messages, not the %d its input names", agent.SegmentsLen(ref.Segments), ref.BaseLen),
			ErrContextMismatch, nil)
	}
	// Keyed by workflow id: a run that continued as new keeps its
	// transcript, and the segments tell a stale entry from a good one.
	run := activity.GetInfo(ctx).WorkflowExecution.ID
	stored := agent.SegmentsHash(ref.Segments)
	if err := a.checkStore(ctx, ref.StoreID); err != nil {
		return turnContext{}, err
	}
	var tc turnContext
	switch cached, ok := a.contexts.prefix(run, ref.BaseLen, stored); {
	case ref.BaseLen == 0:
		tc.t = agent.NewTranscript(ref.SystemPrompt)
	case ok && !a.NoContextCache:
		tc = cached
	default:
		var system string
		var msgs []agent.Message
		err := a.retryStore(ctx, func() (err error) {
			system, msgs, err = store.ReadSegments(ctx, a.Store, ref.Segments)
			return err
		})
		if err != nil {
			return turnContext{}, err
		}
		tc.t = agent.NewTranscript(system)
		tc.t.Append(msgs...)
	}
	tc.storedAs(ref.Segments)
	tc.t.Append(ref.Delta...)
	resolved, err := a.resolveMessages(ctx, tc.t.Messages[len(tc.resolved):])
	if err != nil {
		return turnContext{}, err
	}
	tc.resolved = append(tc.resolved, resolved...)
	return tc, nil
}

// saveSegments stores what the context adds to the segments of ref, so that
// any worker can read it back, and returns the segments that hold the whole
// context. It runs beside the model call: with the worker's cache warm, the
// store is never on a turn's critical path.
func (a *Activities) saveSegments(ctx context.Context, ref ContextRef, t *agent.Transcript) ([]agent.Segment, error) {
	n := t.Len()
	keep, from := store.PlanSegments(ref.Segments, n, t.SizeOf)
	if keep == len(ref.Segments) && from == n {
		return ref.Segments, nil
	}
	scope := activity.GetInfo(ctx).WorkflowExecution.ID
	var seg agent.Segment
	err := a.retryStore(ctx, func() (err error) {
		seg, err = store.PutSegment(ctx, a.Store, scope, t.SystemPrompt, from, t.Range(from, n))
		return err
	})
	if err != nil {
		return nil, err
	}
	return append(slices.Clone(ref.Segments[:keep]), seg), nil
}

// resolveMessages resolves the stubs of messages, several blobs at a time:
// after a worker restart a long transcript's tool outputs are read at once.
// A blob missing from the store (deleted by hand, a store restored from an
// old backup) becomes store.LostText in the context the model gets, with an
// error log line and the agentloop.content.lost metric, and the turn goes
// on: failing would end the session for good, since no retry brings the
// blob back. The transcript (stubs, hash chain) is left as it is.
func (a *Activities) resolveMessages(ctx context.Context, ms []agent.Message) ([]agent.Message, error) {
	out := make([]agent.Message, len(ms))
	errs := make([]error, len(ms))
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i, m := range ms {
		if !store.HasStubs(m) {
			out[i] = m
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = a.retryStore(ctx, func() (err error) {
				out[i], err = store.ResolveMessageOrLost(ctx, a.Store, m, func(ref agent.BlobRef) { a.contentLost(ctx, ref) })
				return err
			})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// remember caches the context as it stands after a model turn.
func (a *Activities) remember(ctx context.Context, tc turnContext) {
	a.contexts.put(activity.GetInfo(ctx).WorkflowExecution.ID, tc)
}
