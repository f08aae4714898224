package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// A store id names one store: 16 random bytes in hex, written by the first
// LoadID (the worker calls it at start) under a key no scope can have
// (",store/id"; see scope.go), and read by every later one. Two workers of
// the same store read the same id; two of different stores (two hosts each
// with its own directory, a typo in a bucket name) read different ones. A
// run carries the id of the store its first workflow task saw
// (activities.ResolveRunOutput.StoreID), and an activity on a worker whose
// id differs refuses to read or write the run's content, so it goes to a
// worker that has the run's store instead of failing as ContentMissing.
//
// Two workers loading the id of a new, empty store at the same instant
// agree: the id is created only where none is (link(2) in a directory,
// If-None-Match: * on S3), and each reads back the one that won. An S3
// server without conditional writes gets a plain put, read back, and two
// workers starting at the same instant may then each see their own id
// once: docs/operations.md says to start a fleet's first worker first.
const idKey = ",store/id"

// ID is the store id, "" until LoadID read it.
func (s *Store) ID() string { return s.id }

// LoadID reads the store id, creating it if the store has none.
func (s *Store) LoadID(ctx context.Context) error {
	id, err := s.backend.Get(ctx, idKey)
	if errors.Is(err, ErrMissing) {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		if err := s.createID(ctx, []byte(hex.EncodeToString(b))); err != nil {
			return fmt.Errorf("content store %s: write the store id: %w", s.backend.Name(), err)
		}
		id, err = s.backend.Get(ctx, idKey)
	}
	if err != nil {
		return fmt.Errorf("content store %s: read the store id: %w", s.backend.Name(), err)
	}
	s.id = strings.TrimSpace(string(id))
	return nil
}

// createID writes a new store id unless one is there already.
func (s *Store) createID(ctx context.Context, id []byte) error {
	if c, ok := s.backend.(creator); ok {
		err := c.Create(ctx, idKey, id)
		if err == nil || errors.Is(err, errExists) {
			return nil
		}
		if !errors.Is(err, errNoConditionalPut) {
			return err
		}
	}
	return s.backend.Put(ctx, idKey, id)
}
