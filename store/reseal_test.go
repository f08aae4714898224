package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/codec"
)

// A re-seal stopped part-way (its context cancelled after the first blob)
// goes on where it stopped when run again: the blob done stays done, the
// rest are re-sealed, and every blob reads with the new key alone.
func TestResealResumes(t *testing.T) {
	dir := t.TempDir()
	old := keyRing(t, "k1")
	s, err := Open(dir, Options{Keys: old, CacheBytes: -1})
	require.NoError(t, err)
	ctx := context.Background()
	var refs []agent.BlobRef
	for i := range 4 {
		ref, err := s.Put(ctx, "agent-1", payload(i))
		require.NoError(t, err)
		refs = append(refs, ref)
	}
	k2 := keyRing(t, "k2")
	both, err := codec.NewKeys(k2.Active(), old.Active())
	require.NoError(t, err)
	rotated, err := Open(dir, Options{Keys: both, CacheBytes: -1})
	require.NoError(t, err)

	stopped, cancel := context.WithCancel(ctx)
	st, err := rotated.Reseal(stopped, false, func(string) { cancel() })
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	require.Equal(t, 1, st.Resealed)

	st, err = rotated.Reseal(ctx, false, nil)
	require.NoError(t, err)
	require.Equal(t, ResealStats{Objects: 4, Current: 1, Resealed: 3}, st)
	fresh, err := Open(dir, Options{Keys: k2, CacheBytes: -1})
	require.NoError(t, err)
	for _, ref := range refs {
		_, err := fresh.Get(ctx, ref)
		require.NoError(t, err)
	}
}
