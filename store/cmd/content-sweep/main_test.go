package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/store"
)

// Against a real dev server: a sweep of namespace default deletes default's
// content of a workflow id the namespace does not have, leaves another
// namespace's content of the same id, and leaves the keys of the layout
// without a namespace until -legacy says default owns them.
func TestSweepOneNamespaceAndLegacyOnlyWhenTold(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv, err := devserver.Start(ctx, devserver.Options{})
	require.NoError(t, err)
	defer func() { _ = srv.Stop() }()
	addr := srv.FrontendHostPort()

	root := t.TempDir()
	data := []byte(`{"type":"text","text":"` + strings.Repeat("x", 3000) + `"}`)
	a, err := store.Open(root, store.Options{CacheBytes: -1})
	require.NoError(t, err)
	b, err := store.Open(root, store.Options{CacheBytes: -1, Namespace: "team-b"})
	require.NoError(t, err)
	refA, err := a.Put(ctx, "gone-run", data)
	require.NoError(t, err)
	refB, err := b.Put(ctx, "gone-run", data)
	require.NoError(t, err)
	// A blob of the layout before namespaces: <workflow id>/<sha256>.
	legacy := refA
	legacy.Scope = "old-run"
	stored, err := os.ReadFile(filepath.Join(root, store.KeyPrefix("", "gone-run"), refA.SHA256))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(root, "old-run"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "old-run", refA.SHA256), stored, 0o600))

	require.NoError(t, run(root, 0, false, false, addr, "default"))
	_, err = a.Get(ctx, refA)
	require.ErrorIs(t, err, store.ErrMissing, "default's content of a gone workflow is swept")
	_, err = b.Get(ctx, refB)
	require.NoError(t, err, "team-b's content of the same id stays")
	_, err = a.Get(ctx, legacy)
	require.NoError(t, err, "legacy keys stay, and still read")

	require.NoError(t, run(root, 0, false, true, addr, "default"))
	_, err = a.Get(ctx, legacy)
	require.ErrorIs(t, err, store.ErrMissing, "with -legacy, default owns them")
	_, err = b.Get(ctx, refB)
	require.NoError(t, err)
}
