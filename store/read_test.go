package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Read, knowing only a hash, finds what the named workflow stored in the
// store's namespace and nothing else: not the same bytes cached or stored
// for another workflow, not another namespace's, and a legacy key only
// for its owner.
func TestReadOnlyWhatTheScopeStored(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{Namespace: "team-a"}) // with a cache
	ref, err := s.Put(ctx, "wf-1", payload(1))
	require.NoError(t, err)

	got, err := s.Read(ctx, "wf-1", ref.SHA256)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
	_, err = s.Read(ctx, "wf-2", ref.SHA256)
	require.ErrorIs(t, err, ErrMissing, "the cache holds these bytes, but wf-2 never stored them")
	_, err = dirStore(t, root, Options{Namespace: "team-b"}).Read(ctx, "wf-1", ref.SHA256)
	require.ErrorIs(t, err, ErrMissing, "team-b's wf-1 is another workflow")
	_, err = s.Read(ctx, "wf-1", "ABC")
	require.ErrorIs(t, err, ErrCorrupt, "not a hash")

	// Once wf-2 stores the same bytes, it reads them too.
	_, err = s.Put(ctx, "wf-2", payload(1))
	require.NoError(t, err)
	got, err = dirStore(t, root, Options{Namespace: "team-a", CacheBytes: -1}).Read(ctx, "wf-2", ref.SHA256)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)

	// A blob of the layout without namespaces belongs to no namespace
	// unless one owns the legacy keys.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "old-run"), 0o700))
	require.NoError(t, os.Rename(filepath.Join(root, KeyPrefix("team-a", "wf-1"), ref.SHA256), filepath.Join(root, "old-run", ref.SHA256)))
	_, err = dirStore(t, root, Options{Namespace: "team-a", CacheBytes: -1}).Read(ctx, "old-run", ref.SHA256)
	require.ErrorIs(t, err, ErrMissing)
	got, err = dirStore(t, root, Options{Namespace: "team-a", CacheBytes: -1, LegacyOwner: true}).Read(ctx, "old-run", ref.SHA256)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
}
