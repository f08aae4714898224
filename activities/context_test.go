package activities

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
)

// The cache answers a turn by the segments that hold its prefix, never by
// a hash of re-encoded messages: a worker of a build that encodes messages
// differently from the workflow's still uses its cache.
func TestContextCacheBySegments(t *testing.T) {
	seg := func(sha string, n int) agent.Segment {
		return agent.Segment{Ref: agent.BlobRef{SHA256: sha, Size: 100}, Count: n}
	}
	loaded := []agent.Segment{seg("aa", 2)}
	saved := []agent.Segment{seg("aa", 2), seg("bb", 1)}
	tc := turnContext{t: agent.NewTranscript("sys")}
	msgs := []agent.Message{agent.UserText("one", 1), agent.UserText("two", 2), agent.UserText("three", 3), agent.UserText("four", 4)}
	tc.t.Append(msgs...)
	tc.resolved = msgs
	tc.storedAs(loaded)
	tc.storedAs(saved)
	c := newContextCache(4, 1<<20)
	c.put("run", tc)

	got, ok := c.prefix("run", 3, agent.SegmentsHash(saved))
	require.True(t, ok, "the segments the context was saved as")
	require.Equal(t, 3, got.t.Len())
	require.Equal(t, map[string]int{agent.SegmentsHash(saved): 3}, got.stored)
	_, ok = c.prefix("run", 2, agent.SegmentsHash(loaded))
	require.True(t, ok, "the segments it was loaded from: the workflow may not have taken the new ones")

	_, ok = c.prefix("run", 3, agent.SegmentsHash([]agent.Segment{seg("aa", 2), seg("cc", 1)}))
	require.False(t, ok, "other segments hold other messages")
	_, ok = c.prefix("run", 2, agent.SegmentsHash(saved))
	require.False(t, ok, "a list holds one length")
	_, ok = c.prefix("other-run", 3, agent.SegmentsHash(saved))
	require.False(t, ok)
}
