package store

import (
	"errors"
	"fmt"

	"github.com/durable-agents/agentloop/agent"
)

// ErrMissing and ErrCorrupt are the permanent failures of a read: the
// content is not in the store, or what is there does not match its hash (or
// cannot be decrypted with the keys given). Retrying cannot help; every
// other error of a store (a network failure, a throttled bucket) may pass.
var (
	ErrMissing = errors.New("missing from the content store")
	ErrCorrupt = errors.New("corrupt in the content store")
)

// ContentError is a failed read or write of one blob, naming its hash.
type ContentError struct {
	Ref agent.BlobRef
	Err error
}

func (e *ContentError) Error() string {
	scope := ""
	if e.Ref.Scope != "" {
		scope = fmt.Sprintf(" of %q", e.Ref.Scope)
	}
	return fmt.Sprintf("content sha256:%s%s: %v", e.Ref.SHA256, scope, e.Err)
}

func (e *ContentError) Unwrap() error { return e.Err }

// IsPermanent reports whether err is a store failure that no retry can
// fix: missing or corrupt content.
func IsPermanent(err error) bool {
	return errors.Is(err, ErrMissing) || errors.Is(err, ErrCorrupt)
}
