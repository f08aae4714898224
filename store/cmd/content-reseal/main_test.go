package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/codec"
	"github.com/durable-agents/agentloop/internal/harness/s3server"
	"github.com/durable-agents/agentloop/store"
)

// A key rotation on a real directory store and on the S3-compatible
// server: blobs sealed with k1 (in a short scope and in a long one, whose
// name object is not a blob), and a watch lease. With the ring k2,k1 the
// dry run lists them and changes nothing; the run re-seals them, after
// which k2 alone reads every one and k1 alone none; a second run finds
// nothing to do.
func TestResealAfterRotation(t *testing.T) {
	k1, err := codec.GenerateKey("k1")
	require.NoError(t, err)
	k2, err := codec.GenerateKey("k2")
	require.NoError(t, err)
	ring := func(ks ...codec.Key) codec.Keys {
		r, err := codec.NewKeys(ks...)
		require.NoError(t, err)
		return r
	}
	env := map[string]string{codec.EnvKeys: k2.Export() + "," + k1.Export()}
	getenv := func(k string) string { return env[k] }

	for _, backend := range []string{"dir", "s3"} {
		t.Run(backend, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			spec := t.TempDir()
			if backend == "s3" {
				srv := s3server.Start(t)
				srv.SetEnv(t)
				spec = srv.Spec
			}
			open := func(keys codec.Keys) *store.Store {
				s, err := store.Open(spec, store.Options{Keys: keys, CacheBytes: -1})
				require.NoError(t, err)
				return s
			}
			old := open(ring(k1))
			long := "session-" + strings.Repeat("x", 300)
			var refs []agent.BlobRef
			for i, scope := range []string{"agent-1", "agent-1", "agent-2", long} {
				ref, err := old.Put(ctx, scope, []byte(strings.Repeat("secret output ", 100+i)))
				require.NoError(t, err)
				refs = append(refs, ref)
			}
			until := time.Now().Add(time.Hour).Truncate(time.Millisecond)
			require.NoError(t, old.MarkWatched(ctx, "agent-2", until))
			readsAll := func(s *store.Store) bool {
				for _, ref := range refs {
					if _, err := s.Get(ctx, ref); err != nil {
						return false
					}
				}
				return true
			}

			var out bytes.Buffer
			require.NoError(t, run(ctx, spec, true, false, getenv, &out))
			require.Equal(t, 5, strings.Count(out.String(), "would re-seal "), out.String())
			require.Contains(t, out.String(), "6 objects, 5 would re-seal, 0 already sealed with it, 1 not blobs")
			require.False(t, readsAll(open(ring(k2))), "the dry run rewrote nothing")

			out.Reset()
			require.NoError(t, run(ctx, spec, false, false, getenv, &out))
			require.Contains(t, out.String(), "6 objects, 5 re-sealed, 0 already sealed with it, 1 not blobs", out.String())
			require.True(t, readsAll(open(ring(k2))), "k2 alone reads every blob")
			require.False(t, readsAll(open(ring(k1))), "k1 reads none any more")
			got, err := open(ring(k2)).WatchedUntil(ctx, "agent-2")
			require.NoError(t, err)
			require.Equal(t, until.UnixMilli(), got.UnixMilli(), "the lease was re-sealed as it was")

			out.Reset()
			require.NoError(t, run(ctx, spec, false, false, getenv, &out))
			require.Contains(t, out.String(), "6 objects, 0 re-sealed, 5 already sealed with it, 1 not blobs", "idempotent")
		})
	}
}

// Without a key ring there is nothing to seal with: a clear error.
func TestResealNeedsKeys(t *testing.T) {
	err := run(context.Background(), t.TempDir(), false, false, func(string) string { return "" }, &bytes.Buffer{})
	require.ErrorContains(t, err, "no key ring: set "+codec.EnvKeys)
}
