package crashtest_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/stack"
)

// workerBin is the test worker, built once per test binary.
var workerBin string

// TestMain builds the worker binary. The tests spend most of their time
// waiting for Temporal's timeouts, not on the CPU, so they run in parallel
// beyond GOMAXPROCS unless -test.parallel says otherwise.
func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "8")
	}
	dir, err := os.MkdirTemp("", "crashtest-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workerBin = filepath.Join(dir, "crashtest-worker")
	build := exec.Command("go", "build", "-o", workerBin, "github.com/durable-agents/agentloop/internal/harness/crashtest/worker")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build crashtest worker:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	if testing.Verbose() {
		fmt.Printf("built crashtest worker in %v\n", time.Since(start).Round(time.Millisecond))
	}
	if os.Getenv("TEMPORAL_STACK") != "" {
		if err := startStack(dir); err != nil {
			fmt.Fprintln(os.Stderr, "TEMPORAL_STACK:", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	if onStack != nil {
		_ = onStack.pg.Stop()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// onStack is set with TEMPORAL_STACK=1: the tests run on the self-hosted
// stack (internal/harness/stack, as scripts/stack runs it) instead of dev servers.
// One PostgreSQL serves the package; each test gets a Temporal server
// process of its own on databases of its own, which a server restart
// stops (SIGTERM) and starts again.
var onStack *stackEnv

type stackEnv struct {
	bins    stack.Binaries
	compose stack.Compose
	pg      *stack.Postgres
	mu      sync.Mutex
	servers int
}

func startStack(dir string) error {
	bins, err := stack.FindBinaries()
	if err != nil {
		return err
	}
	compose, err := stack.LoadCompose()
	if err != nil {
		return err
	}
	ports, err := stack.FreePorts()
	if err != nil {
		return err
	}
	// PostgreSQL runs as its own user when the tests run as root.
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	pg, err := stack.StartPostgres(context.Background(), bins, filepath.Join(dir, "postgresql"), ports.Frontend,
		compose.Env("POSTGRES_USER", "temporal"), compose.Env("POSTGRES_PWD", "temporal"))
	if err != nil {
		return err
	}
	onStack = &stackEnv{bins: bins, compose: compose, pg: pg}
	return nil
}
