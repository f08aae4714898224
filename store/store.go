package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/codec"
)

// Options configure a Store.
type Options struct {
	// Keys encrypt every blob written with the ring's first key and
	// decrypt with whichever key a blob names. Empty: blobs are stored
	// unencrypted (and blobs so stored still read once keys are set).
	Keys codec.Keys
	// CacheBytes bounds the in-memory cache of plaintext by SHA-256,
	// filled by Put and Get: 0 means DefaultCacheBytes, negative no cache.
	// A cached blob is served even after it was deleted from the backend.
	CacheBytes int
	// Namespace is the Temporal namespace whose runs' content the store
	// keeps: every key carries it (scope.go), so that runs of two
	// namespaces with the same workflow id never share a key and a sweep
	// of one never deletes the other's content. Empty means "default".
	Namespace string
	// LegacyOwner says that the keys written before keys carried the
	// namespace belong to Namespace, so Sweep may delete them. Set it only
	// when no other namespace ever used the store: otherwise those keys
	// are never swept.
	LegacyOwner bool
}

// DefaultCacheBytes is the cache size when Options.CacheBytes is 0. The
// model-turn activity keeps each run's resolved context in a cache of its
// own, so this one mostly serves reads of fresh content (a finalize after
// an execute, a watcher following a run) and need not hold whole contexts.
const DefaultCacheBytes = 64 << 20

// Store keeps blobs by the SHA-256 of their plaintext in a Backend,
// compressed and, with keys, encrypted (format.go). Safe for concurrent use.
type Store struct {
	backend Backend
	ring    ring
	cache   *lru[[]byte] // nil: no cache
	seen    seenKeys     // keys this process wrote or read: Put skips them

	namespace   string
	legacyOwner bool
	id          string // the store id (id.go), "" until LoadID reads it
}

var _ Blobs = (*Store)(nil)

// New returns a store over b.
func New(b Backend, o Options) (*Store, error) {
	r, err := newRing(o.Keys)
	if err != nil {
		return nil, err
	}
	ns := o.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	s := &Store{backend: b, ring: r, seen: newSeenKeys(), namespace: ns, legacyOwner: o.LegacyOwner}
	switch {
	case o.CacheBytes == 0:
		s.cache = newLRU[[]byte](DefaultCacheBytes)
	case o.CacheBytes > 0:
		s.cache = newLRU[[]byte](o.CacheBytes)
	}
	return s, nil
}

// Open returns a store over the backend spec names (see OpenBackend).
// A writer of runs' content (the worker) then calls LoadID; readers need
// no id, and may have credentials that cannot write one.
func Open(spec string, o Options) (*Store, error) {
	b, err := OpenBackend(spec)
	if err != nil {
		return nil, err
	}
	return New(b, o)
}

// Name says where the blobs are, for logs.
func (s *Store) Name() string { return s.backend.Name() }

// Namespace is the Temporal namespace the store's keys carry.
func (s *Store) Namespace() string { return s.namespace }

// Put stores data under scope (the workflow id of the run storing it).
func (s *Store) Put(ctx context.Context, scope string, data []byte) (agent.BlobRef, error) {
	sum := sha256.Sum256(data)
	ref := agent.BlobRef{SHA256: hex.EncodeToString(sum[:]), Size: len(data), Scope: scope}
	prefix := s.prefix(scope)
	key := prefix + "/" + ref.SHA256
	if s.seen.has(key) {
		s.remember(ref.SHA256, data)
		return ref, nil
	}
	if err := s.writeName(ctx, prefix, scope); err != nil {
		return agent.BlobRef{}, &ContentError{Ref: ref, Err: err}
	}
	stored, err := s.ring.encode(data)
	if err != nil {
		return agent.BlobRef{}, &ContentError{Ref: ref, Err: err}
	}
	if err := s.backend.Put(ctx, key, stored); err != nil {
		return agent.BlobRef{}, &ContentError{Ref: ref, Err: err}
	}
	s.seen.add(key)
	s.remember(ref.SHA256, data)
	return ref, nil
}

// Get returns the plaintext ref names, checked against its hash and size.
func (s *Store) Get(ctx context.Context, ref agent.BlobRef) ([]byte, error) {
	if !isSHA256(ref.SHA256) || ref.Size < 0 {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: not a SHA-256 reference", ErrCorrupt)}
	}
	if data, ok := s.cached(ref); ok {
		return data, nil
	}
	data, err := s.load(ctx, ref, ref.Size, true)
	if err == nil && len(data) != ref.Size {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: %s holds %d bytes, not the %d its reference names",
			ErrCorrupt, s.backend.Name(), len(data), ref.Size)}
	}
	return data, err
}

// MaxReadBytes is the largest blob Read returns: far above any content the
// loop stores (tool output is truncated to 50 KB), and a bound on what a
// forged blob can make a reader decompress.
const MaxReadBytes = 64 << 20

// Read returns the plaintext stored under scope (a workflow id) in the
// store's namespace with the given SHA-256, when only the hash is known:
// the codec server's GET /blobs/. Unlike Get it never answers with a copy
// of the same bytes cached for another scope or namespace, and reads the
// key of the layout without namespaces only for a LegacyOwner store: what
// it returns was stored for scope in this namespace. A blob over
// MaxReadBytes is an error.
func (s *Store) Read(ctx context.Context, scope, sha string) ([]byte, error) {
	ref := agent.BlobRef{SHA256: sha, Scope: scope}
	if !isSHA256(sha) {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: not a SHA-256", ErrCorrupt)}
	}
	if s.cache != nil && s.seen.has(s.prefix(scope)+"/"+sha) {
		if data, ok := s.cache.get(sha); ok {
			return bytes.Clone(data), nil
		}
	}
	return s.load(ctx, ref, MaxReadBytes, s.legacyOwner)
}

// load reads ref's blob from the backend, at most limit bytes of it,
// checked against its hash; legacy allows the key without a namespace.
func (s *Store) load(ctx context.Context, ref agent.BlobRef, limit int, legacy bool) ([]byte, error) {
	// The namespaced key first; then the key the blob had before keys
	// carried the namespace, which histories written then still name.
	key := s.prefix(ref.Scope) + "/" + ref.SHA256
	stored, err := s.backend.Get(ctx, key)
	if errors.Is(err, ErrMissing) && legacy {
		old := scopePrefix(ref.Scope) + "/" + ref.SHA256
		if data, lerr := s.backend.Get(ctx, old); !errors.Is(lerr, ErrMissing) {
			key, stored, err = old, data, lerr
		}
	}
	if err != nil {
		return nil, &ContentError{Ref: ref, Err: err}
	}
	plain, err := s.ring.decode(stored, limit)
	if err != nil {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w (%s)", err, s.backend.Name())}
	}
	sum := sha256.Sum256(plain)
	if got := hex.EncodeToString(sum[:]); got != ref.SHA256 {
		return nil, &ContentError{Ref: ref, Err: fmt.Errorf("%w: %s holds %d bytes hashing to sha256:%s",
			ErrCorrupt, s.backend.Name(), len(plain), got)}
	}
	s.seen.add(key)
	s.remember(ref.SHA256, plain)
	return plain, nil
}

// remember caches a copy of data: the caller may reuse its slice.
func (s *Store) remember(sha string, data []byte) {
	if s.cache == nil {
		return
	}
	if _, ok := s.cache.get(sha); !ok {
		s.cache.add(sha, bytes.Clone(data), len(data))
	}
}

// cached returns a copy, so that no caller can change what another reads.
func (s *Store) cached(ref agent.BlobRef) ([]byte, bool) {
	if s.cache == nil {
		return nil, false
	}
	data, ok := s.cache.get(ref.SHA256)
	if !ok || len(data) != ref.Size {
		return nil, false
	}
	return bytes.Clone(data), true
}
