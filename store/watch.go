package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Watch leases tell a worker whether anyone watches a workflow's live
// stream, so that a model turn nobody watches heartbeats for liveness only
// (every heartbeat is a billable action) and a watched one streams its
// deltas. Temporal has no cheap way to say this: signals, memos and search
// attributes are history, and a heartbeat's answer carries nothing from
// clients. The store is shared by every worker and client of a run already,
// and a lease is a few bytes a watcher rewrites every few seconds and a
// streaming activity reads every few seconds, out of history.
//
// One lease per workflow id (the store's scope), so a watcher following a
// session across continue-as-new keeps one lease. Several watchers write
// the same key; each writes a later expiry, so the lease lasts while any
// of them is there.

// watchKey is the lease's name within its scope's prefix; it is not a
// SHA-256, so it can never be a blob's key.
const watchKey = "watch"

// WatchLeases records and reads watch leases: *Store.
type WatchLeases interface {
	// MarkWatched says that a client watches scope's live stream until
	// until.
	MarkWatched(ctx context.Context, scope string, until time.Time) error
	// WatchedUntil returns the expiry of scope's lease; zero when there is
	// none.
	WatchedUntil(ctx context.Context, scope string) (time.Time, error)
}

var _ WatchLeases = (*Store)(nil)

type watchLease struct {
	Until int64 `json:"until"` // Unix milliseconds, the watcher's clock
}

// MarkWatched writes scope's lease, sealed as blobs are.
func (s *Store) MarkWatched(ctx context.Context, scope string, until time.Time) error {
	prefix := s.prefix(scope)
	// As Put does: a long scope's name goes first, for Sweep.
	if err := s.writeName(ctx, prefix, scope); err != nil {
		return fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	data, _ := json.Marshal(watchLease{Until: until.UnixMilli()})
	stored, err := s.ring.encode(data)
	if err != nil {
		return fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	if err := s.backend.Put(ctx, prefix+"/"+watchKey, stored); err != nil {
		return fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	return nil
}

// WatchedUntil reads scope's lease. A missing lease is not an error: nobody
// watches.
func (s *Store) WatchedUntil(ctx context.Context, scope string) (time.Time, error) {
	stored, err := s.backend.Get(ctx, s.prefix(scope)+"/"+watchKey)
	if errors.Is(err, ErrMissing) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	data, err := s.ring.decode(stored, 1<<10)
	if err != nil {
		return time.Time{}, fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	var l watchLease
	if err := json.Unmarshal(data, &l); err != nil {
		return time.Time{}, fmt.Errorf("watch lease of %q: %w", scope, err)
	}
	return time.UnixMilli(l.Until), nil
}
