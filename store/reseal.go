package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
)

// Key rotation. A new key put first in the ring seals what is written from
// then on; Reseal rewrites what is already stored, so that the old key can
// be dropped: every stored blob (and watch lease) that is not sealed with
// the active key is opened with the key it names and sealed again with the
// active one. It is idempotent (a blob sealed with the active key is
// skipped after reading its header) and so resumable: run it again after
// an interruption and it goes on where it stopped. A rewritten blob holds
// the same plaintext, so readers never see a difference, and a worker
// writing the same blob meanwhile writes the same plaintext too. Files that
// are not blobs (a long scope's name) are left as they are.

// ResealStats counts what Reseal found.
type ResealStats struct {
	Objects  int // every object listed
	Current  int // already sealed with the active key
	Resealed int // rewritten (or, in a dry run, to be)
	Skipped  int // not blobs: left alone
}

// maxResealBlob bounds the plaintext Reseal opens: far above any blob a
// run stores, far below what a forged gzip stream could make.
const maxResealBlob = 1 << 30

// Reseal re-seals every stored object not sealed with the active key. With
// dryRun it only counts; each key it rewrites (or would) goes to fn.
func (s *Store) Reseal(ctx context.Context, dryRun bool, fn func(key string)) (ResealStats, error) {
	var st ResealStats
	err := s.backend.ListKeys(ctx, func(key string) error {
		st.Objects++
		stored, err := s.backend.Get(ctx, key)
		if errors.Is(err, ErrMissing) {
			st.Objects-- // deleted since it was listed
			return nil
		}
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(stored, magic[:len(magic)-1]) {
			st.Skipped++
			return nil
		}
		if s.ring.sealedWithActive(stored) {
			st.Current++
			return nil
		}
		plain, err := s.ring.decode(stored, maxResealBlob)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		st.Resealed++
		if fn != nil {
			fn(key)
		}
		if dryRun {
			return nil
		}
		again, err := s.ring.encode(plain)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		return s.backend.Put(ctx, key, again)
	})
	return st, err
}

// sealedWithActive says whether stored bytes are sealed with the ring's
// active key, or are plaintext when the ring has none.
func (r ring) sealedWithActive(data []byte) bool {
	if len(data) < len(magic)+1 {
		return false
	}
	if data[len(magic)]&flagSealed == 0 {
		return r.active == ""
	}
	rest := data[len(magic)+1:]
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return false
	}
	return r.active != "" && string(rest[1:1+rest[0]]) == r.active
}
