package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// Keys are "<prefix>/<sha256 hex>", where the prefix is the scope (a
// workflow id, any string) escaped into one safe path segment:
//
//   - url.PathEscape, so "/", "\" and non-ASCII cannot make new segments;
//   - "_" for the empty scope, so a scope "_" has its first byte escaped,
//     as do "." and ".." (path segments of their own) and a leading "~";
//   - escaped scopes longer than maxPrefix (file names stop at 255 bytes,
//     S3 keys at 1024, workflow ids at 1000 characters) become "~" and a
//     hash of the scope, whose full text is kept in "<prefix>/scope" so
//     that Sweep can still ask Temporal about the workflow.
const (
	maxPrefix = 200
	nameKey   = "scope"
)

func scopePrefix(scope string) string {
	if scope == "" {
		return "_"
	}
	p := url.PathEscape(scope)
	if p == "_" || p == "." || p == ".." || p[0] == '~' {
		p = fmt.Sprintf("%%%02X", p[0]) + p[1:]
	}
	if len(p) > maxPrefix {
		sum := sha256.Sum256([]byte(scope))
		p = "~" + hex.EncodeToString(sum[:16])
	}
	return p
}

func isLongPrefix(prefix string) bool { return strings.HasPrefix(prefix, "~") }

// scopeOf returns the scope a prefix stands for; ok is false when it
// cannot be known (a long scope whose name object is missing or does not
// match, or a prefix this package would not have made).
func (s *Store) scopeOf(ctx context.Context, prefix string) (scope string, ok bool, err error) {
	if prefix == "_" {
		return "", true, nil
	}
	if !isLongPrefix(prefix) {
		scope, err := url.PathUnescape(prefix)
		return scope, err == nil && scopePrefix(scope) == prefix, nil
	}
	name, err := s.backend.Get(ctx, prefix+"/"+nameKey)
	if IsPermanent(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return string(name), scopePrefix(string(name)) == prefix, nil
}

// isSHA256 reports whether s is 64 lowercase hex digits, the only names a
// reference may give a blob (anything else could name another file).
func isSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
