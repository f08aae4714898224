package compaction_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if they leave goroutines behind
// (heartbeats, senders, streams, process waiters that outlive their call).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
