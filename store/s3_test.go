package store

import (
	"bytes"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
)

// s3Open opens the server's spec as a worker would: the credentials come
// from the environment, never from the spec.
func s3Open(t *testing.T, srv *s3server.Server, o Options) *Store {
	t.Helper()
	srv.SetEnv(t)
	s, err := Open(srv.Spec, o)
	require.NoError(t, err)
	return s
}

func TestS3RoundTrip(t *testing.T) {
	srv := s3server.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plainAndSealed(t, func(t *testing.T, name string, keys codec.Keys) {
		s := s3Open(t, srv, Options{Keys: keys})
		require.Equal(t, "s3://"+srv.Bucket+" at "+srv.Endpoint, s.Name())
		ref, err := s.Put(ctx, "agent/"+name, payload(1))
		require.NoError(t, err)
		got, err := s3Open(t, srv, Options{Keys: keys, CacheBytes: -1}).Get(ctx, ref)
		require.NoError(t, err)
		require.Equal(t, payload(1), got)
	})
}

func TestS3MissingAndOutage(t *testing.T) {
	srv := s3server.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := s3Open(t, srv, Options{CacheBytes: -1})
	ref, err := s.Put(ctx, "agent-1", payload(1))
	require.NoError(t, err)

	missing := ref
	missing.Scope = "agent-2"
	_, err = s.Get(ctx, missing)
	require.ErrorIs(t, err, ErrMissing)
	require.True(t, IsPermanent(err))
	require.Contains(t, err.Error(), ref.SHA256)
	require.Contains(t, err.Error(), s.Name())

	srv.Stop()
	_, err = s.Get(ctx, ref)
	require.Error(t, err)
	require.False(t, IsPermanent(err), "an unreachable store is worth retrying: %v", err)
	require.NotContains(t, err.Error(), srv.SecretKey)

	srv.Restart()
	got, err := s.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
}

func TestS3LargeBlob(t *testing.T) {
	srv := s3server.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// A random 64 KiB tile repeats farther apart than gzip's 32 KiB window
	// sees, so the blob stays about 5 MB compressed.
	tile := make([]byte, 64<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(tile)
	data := bytes.Repeat(tile, 80)
	keys := keyRing(t, "k1")
	ref, err := s3Open(t, srv, Options{Keys: keys}).Put(ctx, "wf", data)
	require.NoError(t, err)
	got, err := s3Open(t, srv, Options{Keys: keys, CacheBytes: -1}).Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, data, got)
}
