package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A lease reads back as written, the latest write wins, a scope nobody
// watches has none, and a long scope's name is kept for Sweep.
func TestWatchLease(t *testing.T) {
	ctx := context.Background()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	s, err := New(d, Options{Keys: keyRing(t, "k1")})
	require.NoError(t, err)

	until, err := s.WatchedUntil(ctx, "session-1")
	require.NoError(t, err)
	require.True(t, until.IsZero(), "nobody watches")

	t0 := time.UnixMilli(time.Now().UnixMilli())
	require.NoError(t, s.MarkWatched(ctx, "session-1", t0.Add(time.Minute)))
	require.NoError(t, s.MarkWatched(ctx, "session-1", t0.Add(2*time.Minute)))
	until, err = s.WatchedUntil(ctx, "session-1")
	require.NoError(t, err)
	require.Equal(t, t0.Add(2*time.Minute), until)

	long := strings.Repeat("w", 300)
	require.NoError(t, s.MarkWatched(ctx, long, t0))
	until, err = s.WatchedUntil(ctx, long)
	require.NoError(t, err)
	require.Equal(t, t0, until)
	scope, ok, err := s.scopeOf(ctx, s.prefix(long))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, long, scope)
}
