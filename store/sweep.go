package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// SweepStats says what a sweep found.
type SweepStats struct {
	Scopes  int      // scopes of the namespace (and legacy, when owned) looked at
	Recent  int      // kept: written to within the cutoff
	Live    int      // kept: the workflow still exists
	Unknown int      // kept: a long scope whose workflow id could not be read
	Other   int      // not looked at: another namespace's, or legacy without LegacyOwner
	Deleted []string // the scopes (workflow ids) deleted, or that would be
}

// Sweep deletes the content of every scope of the store's namespace that
// nothing was written to for olderThan and whose workflow exists reports
// gone. A scope is a workflow id: once Temporal has deleted every run of
// it (the namespace's retention), no history can refer to its content,
// because a run that received stubs of another scope copied their blobs
// into its own (workflows: adoptInput). exists must ask the store's
// namespace, report false only when it knows the workflow is gone; its
// errors stop the sweep.
//
// Other namespaces' prefixes are never looked at. Legacy prefixes (keys
// written before keys carried the namespace) are swept only when the
// store was opened with Options.LegacyOwner: their namespace is unknown,
// and asking the wrong one whether a workflow exists would delete a live
// run's content.
//
// olderThan guards against deleting content a run is writing as its
// workflow starts; it should be at least an hour, the time Put trusts
// that a key it has seen is still stored (seenFor). A new run that reuses
// a swept workflow id in the instant between exists and the delete can
// still lose content: retention makes reused ids rare, and its reads then
// fail as ErrMissing rather than return wrong content.
func (s *Store) Sweep(ctx context.Context, olderThan time.Duration, exists func(ctx context.Context, scope string) (bool, error)) (SweepStats, error) {
	return s.sweep(ctx, olderThan, exists, true)
}

// SweepDryRun reports in Deleted what Sweep would delete, deleting nothing.
func (s *Store) SweepDryRun(ctx context.Context, olderThan time.Duration, exists func(ctx context.Context, scope string) (bool, error)) (SweepStats, error) {
	return s.sweep(ctx, olderThan, exists, false)
}

func (s *Store) sweep(ctx context.Context, olderThan time.Duration, exists func(ctx context.Context, scope string) (bool, error), del bool) (SweepStats, error) {
	var st SweepStats
	if olderThan < 0 {
		return st, errors.New("content store sweep: negative age")
	}
	cutoff := time.Now().Add(-olderThan)
	err := s.backend.ListScopes(ctx, func(prefix string, newest time.Time) error {
		if strings.HasPrefix(prefix, nsSep) {
			return nil // the store's own (id.go)
		}
		if !s.ownPrefix(prefix) && !(s.legacyOwner && isLegacyPrefix(prefix)) {
			st.Other++
			return nil
		}
		st.Scopes++
		if newest.After(cutoff) {
			st.Recent++
			return nil
		}
		scope, ok, err := s.scopeOf(ctx, prefix)
		if err != nil {
			return err
		}
		if !ok {
			st.Unknown++
			return nil
		}
		live, err := exists(ctx, scope)
		if err != nil {
			return fmt.Errorf("content store sweep: does workflow %q exist: %w", scope, err)
		}
		if live {
			st.Live++
			return nil
		}
		if del {
			if err := s.backend.DeleteScope(ctx, prefix); err != nil {
				return err
			}
			// Put must write these keys again if the scope comes back.
			s.seen.lru.removePrefix(prefix + "/")
		}
		st.Deleted = append(st.Deleted, scope)
		return nil
	})
	return st, err
}
