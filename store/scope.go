package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
)

// Keys are "<prefix>/<sha256 hex>". The prefix names the Temporal
// namespace and the scope (a workflow id, any string) in one safe path
// segment, "<namespace part>,<scope part>":
//
//   - the scope part is url.PathEscape of the scope, so "/", "\" and
//     non-ASCII cannot make new segments; "_" for the empty scope, so a
//     scope "_" has its first byte escaped, as do "." and ".." (path
//     segments of their own) and a leading "~";
//   - the namespace part is url.PathEscape of the namespace, or "~" and a
//     hash of it when that is longer than maxNamespace;
//   - PathEscape escapes ",", so the first "," ends the namespace part, and
//     no prefix written before namespaces were (a "legacy" prefix: the
//     scope part alone) has one: the two layouts never collide;
//   - a prefix longer than maxPrefix (file names stop at 255 bytes, S3
//     keys at 1024, workflow ids at 1000 characters) has "~" and a hash of
//     the scope as its scope part, whose full text is kept in
//     "<prefix>/scope" so that Sweep can still ask Temporal about the
//     workflow.
//
// Prefixes beginning with "," are the store's own (",store/id").
const (
	maxPrefix    = 200
	maxNamespace = 64
	nameKey      = "scope"
	nsSep        = ","
)

// DefaultNamespace is the namespace of a Store opened without one, as it
// is Temporal's.
const DefaultNamespace = "default"

// KeyPrefix is the path segment that holds namespace's content of scope:
// a directory under a directory store's root, or a key prefix in a bucket.
func KeyPrefix(namespace, scope string) string {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	ns := namespacePart(namespace)
	p := escapeScope(scope)
	if len(ns)+len(nsSep)+len(p) > maxPrefix {
		p = longScope(scope)
	}
	return ns + nsSep + p
}

func namespacePart(namespace string) string {
	n := url.PathEscape(namespace)
	if len(n) > maxNamespace {
		sum := sha256.Sum256([]byte(namespace))
		n = "~" + hex.EncodeToString(sum[:16])
	}
	return n
}

// scopePrefix is the legacy prefix of scope: the scope part alone, as
// stores wrote it before keys carried the namespace. Reads fall back to it.
func scopePrefix(scope string) string {
	p := escapeScope(scope)
	if len(p) > maxPrefix {
		p = longScope(scope)
	}
	return p
}

func escapeScope(scope string) string {
	if scope == "" {
		return "_"
	}
	p := url.PathEscape(scope)
	if p == "_" || p == "." || p == ".." || p[0] == '~' {
		p = fmt.Sprintf("%%%02X", p[0]) + p[1:]
	}
	return p
}

func longScope(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return "~" + hex.EncodeToString(sum[:16])
}

func isLongPrefix(prefix string) bool {
	_, p, _ := strings.Cut(prefix, nsSep)
	if p == "" {
		p = prefix
	}
	return strings.HasPrefix(p, "~")
}

// prefix is the prefix this store writes scope's content under.
func (s *Store) prefix(scope string) string { return KeyPrefix(s.namespace, scope) }

// ownPrefix reports whether prefix holds content of this store's namespace.
func (s *Store) ownPrefix(prefix string) bool {
	return strings.HasPrefix(prefix, namespacePart(s.namespace)+nsSep)
}

// isLegacyPrefix reports whether prefix is of the layout without a
// namespace.
func isLegacyPrefix(prefix string) bool { return !strings.Contains(prefix, nsSep) }

// writeName stores the full scope of a long prefix before anything else
// goes under it, so that a long prefix holding blobs has one.
func (s *Store) writeName(ctx context.Context, prefix, scope string) error {
	if !isLongPrefix(prefix) || s.seen.has(prefix+"/"+nameKey) {
		return nil
	}
	if err := s.backend.Put(ctx, prefix+"/"+nameKey, []byte(scope)); err != nil {
		return err
	}
	s.seen.add(prefix + "/" + nameKey)
	return nil
}

// scopeOf returns the scope a prefix of this store's namespace, or a
// legacy prefix, stands for; ok is false when it cannot be known (a long
// scope whose name object is missing or does not match, or a prefix this
// package would not have made).
func (s *Store) scopeOf(ctx context.Context, prefix string) (scope string, ok bool, err error) {
	want := scopePrefix
	if !isLegacyPrefix(prefix) {
		want = s.prefix
	}
	if isLongPrefix(prefix) {
		name, err := s.backend.Get(ctx, prefix+"/"+nameKey)
		if IsPermanent(err) {
			return "", false, nil
		}
		if err != nil {
			return "", false, err
		}
		return string(name), want(string(name)) == prefix, nil
	}
	p := prefix
	if !isLegacyPrefix(prefix) {
		_, p, _ = strings.Cut(prefix, nsSep)
	}
	if p == "_" {
		return "", want("") == prefix, nil
	}
	scope, err = url.PathUnescape(p)
	return scope, err == nil && want(scope) == prefix, nil
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
