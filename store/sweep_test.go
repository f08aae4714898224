package store

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

	"github.com/durable-agents/agentloop/internal/harness/s3server"
)

// age sets the modification time of every file of a scope's directory.
func age(t *testing.T, root, scope string, d time.Duration) {
	t.Helper()
	dir := filepath.Join(root, KeyPrefix("", scope))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	when := time.Now().Add(-d)
	for _, e := range entries {
		require.NoError(t, os.Chtimes(filepath.Join(dir, e.Name()), when, when))
	}
}

// existsIn says a workflow exists when it is in live, and records the
// ids it was asked about.
func existsIn(asked *[]string, live ...string) func(context.Context, string) (bool, error) {
	return func(_ context.Context, id string) (bool, error) {
		*asked = append(*asked, id)
		return slices.Contains(live, id), nil
	}
}

func TestSweepDir(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{CacheBytes: -1})
	long := strings.Repeat("long/workflow/id/", 30)
	for _, scope := range []string{"gone-old", "live-old", "gone-new", "a/b", long} {
		_, err := s.Put(ctx, scope, payload(1))
		require.NoError(t, err)
	}
	for _, scope := range []string{"gone-old", "live-old", "a/b", long} {
		age(t, root, scope, 48*time.Hour)
	}

	var asked []string
	dry, err := s.SweepDryRun(ctx, 24*time.Hour, existsIn(&asked, "live-old"))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"gone-old", "a/b", long}, dry.Deleted)
	require.ElementsMatch(t, []string{"gone-old", "live-old", "a/b", long}, asked, "recent scopes are not asked about")
	require.Len(t, files(t, root), 6, "a dry run deletes nothing (5 blobs and the long scope's name)")

	st, err := s.Sweep(ctx, 24*time.Hour, existsIn(&asked, "live-old"))
	require.NoError(t, err)
	require.ElementsMatch(t, dry.Deleted, st.Deleted)
	require.Equal(t, SweepStats{Scopes: 5, Recent: 1, Live: 1, Deleted: st.Deleted}, st)
	dirs, err := os.ReadDir(root)
	require.NoError(t, err)
	var left []string
	for _, d := range dirs {
		left = append(left, d.Name())
	}
	require.ElementsMatch(t, []string{"default,live-old", "default,gone-new"}, left)

	// Content stored again under a swept scope is written again, though
	// this process had written it before.
	ref, err := s.Put(ctx, "gone-old", payload(1))
	require.NoError(t, err)
	got, err := dirStore(t, root, Options{CacheBytes: -1}).Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
}

func TestSweepStopsWhenExistsFails(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{})
	_, err := s.Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	age(t, root, "wf", 48*time.Hour)
	unreachable := errors.New("temporal unreachable")
	_, err = s.Sweep(ctx, time.Hour, func(context.Context, string) (bool, error) { return false, unreachable })
	require.ErrorIs(t, err, unreachable)
	require.Len(t, files(t, root), 1)
}

// The S3 backend lists and deletes scopes too; everything there is new, so
// a zero cutoff makes every scope old enough.
func TestSweepS3(t *testing.T) {
	srv := s3server.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := s3Open(t, srv, Options{CacheBytes: -1})
	for _, scope := range []string{"gone", "live", "a/b", "gone2"} {
		for i := range 3 {
			_, err := s.Put(ctx, scope, payload(i))
			require.NoError(t, err)
		}
	}
	var asked []string
	st, err := s.Sweep(ctx, 0, existsIn(&asked, "live"))
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"gone", "a/b", "gone2"}, st.Deleted)
	require.Equal(t, 4, st.Scopes)

	st, err = s.Sweep(ctx, 0, existsIn(&asked, "live"))
	require.NoError(t, err)
	require.Equal(t, SweepStats{Scopes: 1, Live: 1}, st, "only the live scope is left")
}
