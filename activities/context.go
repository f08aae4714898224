package activities

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durable-agents/agentloop/agent"
)

// contextCache keeps each run's context as the model-turn activity last saw
// it, so a turn's input needs only the messages added since. It is bounded
// by runs and by bytes; a miss costs a QueryContext round trip, never
// correctness.
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
	t     *agent.Transcript
	bytes int
}

func newContextCache(maxRuns, maxBytes int) *contextCache {
	return &contextCache{maxRuns: maxRuns, maxBytes: maxBytes, order: list.New(), byRun: map[string]*list.Element{}}
}

// prefix returns the cached first n messages of run if their hash is hash.
func (c *contextCache) prefix(run string, n int, hash string) (*agent.Transcript, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byRun[run]
	if !ok {
		return nil, false
	}
	t := el.Value.(*cacheEntry).t
	if t.Len() < n || t.HashAt(n) != hash {
		return nil, false
	}
	c.order.MoveToFront(el)
	return t.Prefix(n), true
}

// put stores a run's context, evicting the least recently used runs.
func (c *contextCache) put(run string, t *agent.Transcript, size int) {
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
	c.byRun[run] = c.order.PushFront(&cacheEntry{run: run, t: t, bytes: size})
	c.bytes += size
	for c.order.Len() > c.maxRuns || c.bytes > c.maxBytes {
		last := c.order.Back()
		e := last.Value.(*cacheEntry)
		c.bytes -= e.bytes
		c.order.Remove(last)
		delete(c.byRun, e.run)
	}
}

// loadContext rebuilds the context a model turn must send: the verified
// prefix from the cache or from QueryContext pages, then the delta.
func (a *Activities) loadContext(ctx context.Context, ref ContextRef) (*agent.Transcript, error) {
	// Keyed by workflow id: a session that continued as new keeps its
	// transcript, and the hash tells a stale entry from a good one.
	run := activity.GetInfo(ctx).WorkflowExecution.ID
	var t *agent.Transcript
	if ref.BaseLen == 0 {
		t = agent.NewTranscript(ref.SystemPrompt)
	} else if cached, ok := a.contexts.prefix(run, ref.BaseLen, ref.BaseHash); ok && !a.NoContextCache {
		t = cached
	} else {
		fetched, err := a.fetchContext(ctx, ref.BaseLen)
		if err != nil {
			return nil, err
		}
		t = fetched
	}
	if t.HashAt(ref.BaseLen) != ref.BaseHash {
		// The workflow and this worker disagree on the transcript: a bug or
		// a change of message encoding between versions. Retrying cannot
		// fix it.
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("context prefix of %d messages does not match the workflow's hash", ref.BaseLen),
			ErrContextMismatch, nil)
	}
	t.Append(ref.Delta...)
	return t, nil
}

// fetchContext reads the first n messages of the calling workflow's context
// with QueryContext, page by page.
func (a *Activities) fetchContext(ctx context.Context, n int) (*agent.Transcript, error) {
	info := activity.GetInfo(ctx)
	var t *agent.Transcript
	for from := 0; t == nil || t.Len() < n; {
		resp, err := a.Client.QueryWorkflow(ctx, info.WorkflowExecution.ID, info.WorkflowExecution.RunID,
			QueryContext, ContextQuery{From: from, To: n})
		if err != nil {
			return nil, fmt.Errorf("query context of own workflow: %w", err)
		}
		var page ContextPage
		if err := resp.Get(&page); err != nil {
			return nil, fmt.Errorf("decode context page: %w", err)
		}
		if t == nil {
			t = agent.NewTranscript(page.SystemPrompt)
		}
		if page.Next <= from || page.Total < n {
			return nil, fmt.Errorf("context query returned no progress at message %d of %d", from, n)
		}
		t.Append(page.Messages...)
		from = page.Next
	}
	return t, nil
}

// LoadContext reads one page of a workflow run's context with the context
// Query; that run may be closed (the query replays it).
func (a *Activities) LoadContext(ctx context.Context, in LoadContextInput) (ContextPage, error) {
	resp, err := a.Client.QueryWorkflow(ctx, in.WorkflowID, in.RunID, QueryContext, ContextQuery{From: in.From, To: in.To})
	if err != nil {
		return ContextPage{}, fmt.Errorf("query context of %s: %w", in.WorkflowID, err)
	}
	var page ContextPage
	if err := resp.Get(&page); err != nil {
		return ContextPage{}, fmt.Errorf("decode context page: %w", err)
	}
	return page, nil
}

// remember caches the context as it stands after a model turn.
func (a *Activities) remember(ctx context.Context, t *agent.Transcript) {
	a.contexts.put(activity.GetInfo(ctx).WorkflowExecution.ID, t, t.Size())
}
