package sandbox

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if they leave goroutines behind: the
// network proxy's servers and tunnels once its sandbox is closed, the
// waits of commands that ended.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
