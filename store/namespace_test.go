package store

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/harness/s3server"
)

// Two namespaces with the same workflow id keep their content apart: a
// sweep of one, which asks only its own namespace whether the workflow
// exists, leaves the other's content of that id.
func TestSweepKeepsOtherNamespaces(t *testing.T) {
	srv := s3server.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a := s3Open(t, srv, Options{CacheBytes: -1, Namespace: "team-a"})
	b := s3Open(t, srv, Options{CacheBytes: -1, Namespace: "team-b"})
	require.NoError(t, a.LoadID(ctx))
	require.NoError(t, b.LoadID(ctx))
	require.Equal(t, a.ID(), b.ID(), "one store, one id")
	refA, err := a.Put(ctx, "session-1", payload(1))
	require.NoError(t, err)
	refB, err := b.Put(ctx, "session-1", payload(2))
	require.NoError(t, err)

	var asked []string
	st, err := a.Sweep(ctx, 0, existsIn(&asked)) // session-1 is gone from team-a
	require.NoError(t, err)
	require.Equal(t, []string{"session-1"}, st.Deleted)
	require.Equal(t, 1, st.Other, "team-b's scope is not looked at")

	_, err = a.Get(ctx, refA)
	require.ErrorIs(t, err, ErrMissing)
	got, err := b.Get(ctx, refB)
	require.NoError(t, err, "team-b's content of the same workflow id stays")
	require.Equal(t, payload(2), got)
}

// Content written before keys carried the namespace still reads, through
// any namespace's store; a sweep leaves it unless told that its namespace
// owns it.
func TestLegacyKeys(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{CacheBytes: -1})
	ref, err := s.Put(ctx, "old-run", payload(1))
	require.NoError(t, err)
	// Move the blob where a store of the earlier layout put it.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "old-run"), 0o700))
	require.NoError(t, os.Rename(filepath.Join(root, KeyPrefix("", "old-run"), ref.SHA256), filepath.Join(root, "old-run", ref.SHA256)))
	require.NoError(t, os.Remove(filepath.Join(root, KeyPrefix("", "old-run"))))

	for _, ns := range []string{"", "team-b"} {
		got, err := dirStore(t, root, Options{CacheBytes: -1, Namespace: ns}).Get(ctx, ref)
		require.NoError(t, err, "namespace %q", ns)
		require.Equal(t, payload(1), got)
	}

	var asked []string
	st, err := s.Sweep(ctx, 0, existsIn(&asked))
	require.NoError(t, err)
	require.Empty(t, st.Deleted)
	require.Equal(t, 1, st.Other)
	require.Empty(t, asked, "nobody is asked about a legacy scope it does not own")

	owner := dirStore(t, root, Options{CacheBytes: -1, LegacyOwner: true})
	st, err = owner.Sweep(ctx, 0, existsIn(&asked))
	require.NoError(t, err)
	require.Equal(t, []string{"old-run"}, st.Deleted)
	_, err = owner.Get(ctx, ref)
	require.ErrorIs(t, err, ErrMissing)
}

// The first LoadID of a store writes its id; every later one, through any
// namespace, reads it; another store has another.
func TestStoreID(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	first := dirStore(t, root, Options{})
	require.Empty(t, first.ID(), "a reader never writes one")
	require.NoError(t, first.LoadID(ctx))
	require.Len(t, first.ID(), 32)
	again := dirStore(t, root, Options{Namespace: "team-b"})
	require.NoError(t, again.LoadID(ctx))
	require.Equal(t, first.ID(), again.ID())
	other := dirStore(t, t.TempDir(), Options{})
	require.NoError(t, other.LoadID(ctx))
	require.NotEqual(t, first.ID(), other.ID())
	require.Empty(t, files(t, root), "the id is the store's own, not a scope's")
}

// Keys of the two layouts never collide: a workflow id that looks like a
// namespaced prefix is escaped.
func TestKeyPrefixes(t *testing.T) {
	require.Equal(t, "default,wf-1", KeyPrefix("", "wf-1"))
	require.Equal(t, "team-a,a%2Fb", KeyPrefix("team-a", "a/b"))
	require.Equal(t, "default%2Cwf-1", scopePrefix("default,wf-1"), "a legacy prefix has no literal comma")
	require.Len(t, KeyPrefix(string(make([]byte, 500)), "x"), len("~")+32+len(",x"))
	long := KeyPrefix("ns", string(make([]byte, 300)))
	require.LessOrEqual(t, len(long), maxPrefix)
	require.True(t, isLongPrefix(long))
}

// Workers opening a new, empty store at the same instant agree on its id:
// it is created only where none is, on a directory and on S3.
func TestStoreIDOnSimultaneousFirstOpens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := s3server.Start(t)
	for _, tc := range []struct {
		name string
		open func() *Store
	}{
		{"dir", func() func() *Store {
			root := t.TempDir()
			return func() *Store { return dirStore(t, root, Options{}) }
		}()},
		{"s3", func() *Store { return s3Open(t, srv, Options{CacheBytes: -1}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stores := make([]*Store, 16)
			for i := range stores {
				stores[i] = tc.open()
			}
			var wg sync.WaitGroup
			errs := make([]error, len(stores))
			for i, s := range stores {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs[i] = s.LoadID(ctx)
				}()
			}
			wg.Wait()
			for i, s := range stores {
				require.NoError(t, errs[i])
				require.Equal(t, stores[0].ID(), s.ID(), "worker %d", i)
			}
			require.Len(t, stores[0].ID(), 32)
			c, ok := stores[0].backend.(creator)
			require.True(t, ok)
			require.ErrorIs(t, c.Create(ctx, idKey, []byte("another")), errExists, "the server refuses to replace it")
		})
	}
}
