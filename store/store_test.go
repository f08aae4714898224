package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/codec"
)

const marker = "MARKER-the-plaintext-of-a-tool-result"

// payload is JSON-like content that compresses, with the marker inside.
func payload(i int) []byte {
	return []byte(fmt.Sprintf(`{"type":"text","text":"%d %s %s"}`, i, marker, strings.Repeat("line of output\n", 200)))
}

// plainAndSealed runs test as two subtests: "plain", with no keys, and
// "encrypted", with a key ring of one key.
func plainAndSealed(t *testing.T, test func(t *testing.T, name string, keys codec.Keys)) {
	t.Run("plain", func(t *testing.T) { test(t, "plain", codec.Keys{}) })
	t.Run("encrypted", func(t *testing.T) { test(t, "encrypted", keyRing(t, "k1")) })
}

func keyRing(t *testing.T, ids ...string) codec.Keys {
	t.Helper()
	var list []codec.Key
	for _, id := range ids {
		k, err := codec.GenerateKey(id)
		require.NoError(t, err)
		list = append(list, k)
	}
	keys, err := codec.NewKeys(list...)
	require.NoError(t, err)
	return keys
}

func dirStore(t *testing.T, root string, o Options) *Store {
	t.Helper()
	s, err := Open("dir:"+root, o)
	require.NoError(t, err)
	return s
}

// files lists the regular files under root, relative to it, but for the
// store's own (its id).
func files(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(root, p); err == nil && d.Type().IsRegular() && !strings.HasPrefix(rel, ",") {
			out = append(out, rel)
		}
		return err
	}))
	return out
}

func TestRoundTripDir(t *testing.T) {
	plainAndSealed(t, func(t *testing.T, name string, keys codec.Keys) {
		root := t.TempDir()
		ctx := context.Background()
		data := payload(1)
		ref, err := dirStore(t, root, Options{Keys: keys}).Put(ctx, "agent-1", data)
		require.NoError(t, err)
		sum := sha256.Sum256(data)
		require.Equal(t, agent.BlobRef{SHA256: hex.EncodeToString(sum[:]), Size: len(data), Scope: "agent-1"}, ref)

		// A new store (another process) with no cache reads it back.
		got, err := dirStore(t, root, Options{Keys: keys, CacheBytes: -1}).Get(ctx, ref)
		require.NoError(t, err)
		require.Equal(t, data, got)

		stored, err := os.ReadFile(filepath.Join(root, "default,agent-1", ref.SHA256))
		require.NoError(t, err)
		require.Less(t, len(stored), len(data)/5, "blobs are gzipped")
		info, err := os.Stat(filepath.Join(root, "default,agent-1", ref.SHA256))
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o600), info.Mode().Perm())
	})
}

func TestPutStoresSameBytesOnce(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{})
	r1, err := s.Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	r2, err := s.Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	require.Equal(t, r1, r2)
	// Another process writing the same bytes replaces the file.
	_, err = dirStore(t, root, Options{}).Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join("default,wf", r1.SHA256)}, files(t, root))
}

func TestNoPlaintextAtRestWithKeys(t *testing.T) {
	root := t.TempDir()
	keys := keyRing(t, "k1")
	s := dirStore(t, root, Options{Keys: keys})
	for i := range 5 {
		_, err := s.Put(context.Background(), "wf-"+marker, payload(i))
		require.NoError(t, err)
	}
	for _, f := range files(t, root) {
		data, err := os.ReadFile(filepath.Join(root, f))
		require.NoError(t, err)
		require.NotContains(t, string(data), marker)
		require.NotContains(t, string(data), "line of output")
		require.Equal(t, byte(flagGzip|flagSealed), data[len(magic)], "flags of %s", f)
	}
}

func TestReadWithoutTheKey(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	old := keyRing(t, "old-key")
	ref, err := dirStore(t, root, Options{Keys: old}).Put(ctx, "wf", payload(1))
	require.NoError(t, err)

	other := keyRing(t, "new-key")
	_, err = dirStore(t, root, Options{Keys: other, CacheBytes: -1}).Get(ctx, ref)
	require.ErrorIs(t, err, ErrCorrupt)
	require.True(t, IsPermanent(err))
	require.Contains(t, err.Error(), `"old-key"`)
	require.Contains(t, err.Error(), ref.SHA256)
	for _, k := range []codec.Key{old.Active(), other.Active()} {
		secret := strings.TrimPrefix(k.Export(), k.ID()+":")
		require.NotContains(t, err.Error(), secret)
	}
	_, err = dirStore(t, root, Options{CacheBytes: -1}).Get(ctx, ref)
	require.ErrorIs(t, err, ErrCorrupt, "no keys at all")
	require.Contains(t, err.Error(), `"old-key"`)

	// Rotation: the new key first, the old one still decrypts.
	rotated, err := codec.NewKeys(other.Active(), old.Active())
	require.NoError(t, err)
	got, err := dirStore(t, root, Options{Keys: rotated, CacheBytes: -1}).Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
}

func TestPlaintextBlobsReadWithKeys(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	ref, err := dirStore(t, root, Options{}).Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	got, err := dirStore(t, root, Options{Keys: keyRing(t, "k1"), CacheBytes: -1}).Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
}

func TestFlippedByteIsCorrupt(t *testing.T) {
	plainAndSealed(t, func(t *testing.T, name string, keys codec.Keys) {
		root := t.TempDir()
		ctx := context.Background()
		ref, err := dirStore(t, root, Options{Keys: keys}).Put(ctx, "wf", payload(1))
		require.NoError(t, err)
		path := filepath.Join(root, "default,wf", ref.SHA256)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, at := range []int{len(magic), len(data) / 2, len(data) - 1} {
			bad := bytes.Clone(data)
			bad[at] ^= 0x20
			require.NoError(t, os.WriteFile(path, bad, 0o600))
			_, err = dirStore(t, root, Options{Keys: keys, CacheBytes: -1}).Get(ctx, ref)
			require.ErrorIs(t, err, ErrCorrupt, "byte %d", at)
			require.Contains(t, err.Error(), ref.SHA256)
		}
	})
}

func TestDeletedFileIsMissing(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	s := dirStore(t, root, Options{CacheBytes: -1})
	ref, err := s.Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(root, "default,wf", ref.SHA256)))
	_, err = s.Get(ctx, ref)
	require.ErrorIs(t, err, ErrMissing)
	require.True(t, IsPermanent(err))
	require.Contains(t, err.Error(), ref.SHA256)
	require.Contains(t, err.Error(), "dir:"+root)
	var ce *ContentError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, ref, ce.Ref)
}

func TestBadReferenceNamesNoFile(t *testing.T) {
	s := dirStore(t, t.TempDir(), Options{})
	_, err := s.Get(context.Background(), agent.BlobRef{SHA256: "../../etc/passwd", Size: 1})
	require.ErrorIs(t, err, ErrCorrupt)
}

// The cache serves a blob this process stored or read even after the
// backend lost it; CacheBytes < 0 turns that off.
func TestCacheServesDeletedBlob(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	cached := dirStore(t, root, Options{})
	uncached := dirStore(t, root, Options{CacheBytes: -1})
	ref, err := cached.Put(ctx, "wf", payload(1))
	require.NoError(t, err)
	_, err = uncached.Get(ctx, ref)
	require.NoError(t, err)
	require.NoError(t, os.Remove(filepath.Join(root, "default,wf", ref.SHA256)))

	got, err := cached.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)
	got[0] = 'X' // callers get copies
	got, err = cached.Get(ctx, ref)
	require.NoError(t, err)
	require.Equal(t, payload(1), got)

	_, err = uncached.Get(ctx, ref)
	require.ErrorIs(t, err, ErrMissing)
}

func TestConcurrentPutGet(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	// A cache smaller than the payloads' total, so entries come and go.
	s := dirStore(t, root, Options{Keys: keyRing(t, "k1"), CacheBytes: 5 * len(payload(0))})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				data := payload((g + i) % 12)
				ref, err := s.Put(ctx, fmt.Sprintf("wf-%d", i%3), data)
				if err == nil {
					var got []byte
					got, err = s.Get(ctx, ref)
					if err == nil && !bytes.Equal(got, data) {
						err = fmt.Errorf("read back other bytes for %s", ref)
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, files(t, root), 3*12)
}

func TestOddScopesStayInsideTheRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	ctx := context.Background()
	s := dirStore(t, root, Options{})
	scopes := []string{"a/b", "a%2Fb", "../x", "..", ".", "_", "", "~x", `a\b`, "ü/日本語 wf", "/abs", strings.Repeat("../", 400)}
	refs := map[string]agent.BlobRef{}
	for _, scope := range scopes {
		ref, err := s.Put(ctx, scope, payload(1))
		require.NoError(t, err, "scope %q", scope)
		refs[scope] = ref
	}
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing outside the root")
	dirs, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Len(t, dirs, len(scopes), "one directory per scope")

	fresh := dirStore(t, root, Options{CacheBytes: -1})
	for scope, ref := range refs {
		require.Equal(t, scope, ref.Scope)
		got, err := fresh.Get(ctx, ref)
		require.NoError(t, err, "scope %q", scope)
		require.Equal(t, payload(1), got)
	}
}
