package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Backend keeps stored bytes under keys "<scope>/<name>": a directory or an
// S3-compatible bucket. Scopes here are the escaped forms the Store makes
// of workflow ids: one path segment each, safe as a file or object name.
// Methods are safe for concurrent use.
type Backend interface {
	// Put stores data under key, replacing what is there: the Store writes
	// a key again only with the same bytes.
	Put(ctx context.Context, key string, data []byte) error
	// Get returns the bytes under key; a key that holds nothing is an
	// error satisfying errors.Is(err, ErrMissing).
	Get(ctx context.Context, key string) ([]byte, error)
	// ListScopes calls fn for every scope with the newest modification
	// time of its objects, stopping at fn's first error.
	ListScopes(ctx context.Context, fn func(scope string, newest time.Time) error) error
	// ListKeys calls fn for the key of every object, stopping at fn's
	// first error.
	ListKeys(ctx context.Context, fn func(key string) error) error
	// DeleteScope deletes every object of scope.
	DeleteScope(ctx context.Context, scope string) error
	// Name says where the bytes are, for logs: never a secret.
	Name() string
}

// checkKey rejects keys that are not "<scope>/<name>" with two plain path
// segments, so no key can name a place outside a backend's root.
func checkKey(key string) error {
	scope, name, ok := strings.Cut(key, "/")
	if !ok || checkSegment(scope) != nil || checkSegment(name) != nil {
		return fmt.Errorf("content store: bad key %q", key)
	}
	return nil
}

func checkSegment(s string) error {
	if s == "" || s == "." || s == ".." || strings.ContainsAny(s, "/\\\x00") {
		return fmt.Errorf("content store: bad scope %q", s)
	}
	return nil
}
