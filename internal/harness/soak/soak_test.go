package soak

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/stack"
)

// The soak of the issue, 3 minutes of chaos instead of 10 (`go run ./bench
// soak` runs the long one): 3 worker processes and one without the
// provider's key, 100 sessions, a worker killed every 5-15 s, the server
// restarted twice, a host lost for good twice; every invariant holds.
// The sessions have 6 prompts, not 20: 2,000 prompts in 3 minutes are more
// than two cores serve (they took 8 minutes), 600 are what the 10-minute
// soak asks a second. It saturates the machine, so it runs alone and only
// when asked (AGENTLOOP_SOAK=1), like the bench: scripts/test must finish in
// 15 minutes on a fresh machine. It needs the stack's binaries, which
// scripts/test and scripts/stack install.
func TestSoak(t *testing.T) {
	if testing.Short() || os.Getenv("AGENTLOOP_SOAK") == "" {
		t.Skip("a 3-minute chaos soak that saturates the machine: AGENTLOOP_SOAK=1 runs it")
	}
	if _, err := stack.FindBinaries(); err != nil {
		t.Fatal(err)
	}
	o := Defaults(3 * time.Minute)
	o.Prompts = 6
	o.Drain = 5 * time.Minute
	o.Logf = t.Logf
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	r.Print(&b)
	t.Log("\n" + b.String())
	if len(r.Violations) > 0 {
		t.Fatalf("%d invariants broke (logs in %s)", len(r.Violations), r.Dir)
	}
	os.RemoveAll(r.Dir)
}
