package conformance

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
)

// TypeScriptWorker serves a scenario's remote tools and remote hooks from
// a Temporal worker written in TypeScript with the official SDK
// (conformance/typescript/src/worker.ts, built with its own pinned
// packages): the same behaviours as StartGoRemoteWorker, from another SDK
// language, so that the contract, not the Go SDK, is what the trace
// depends on.
type TypeScriptWorker struct {
	// Node is the node binary; Dir the built conformance/typescript
	// (dist/worker.js).
	Node, Dir string
	// Address and Namespace are the Temporal server's.
	Address, Namespace string
	// Scenario is the scenario's file, which the worker reads.
	Scenario string
}

// readyTimeout bounds the wait for the worker's first poll: Node's start
// and the SDK's connection take about a second on an idle machine.
const readyTimeout = time.Minute

// Start is a RemoteWorker: it runs the worker on queue and returns once it
// polls, so that the run's hooks and tools are not left waiting for a
// process that is still starting.
func (w TypeScriptWorker) Start(_ client.Client, _ Scenario, queue string) (func(), error) {
	ns := w.Namespace
	if ns == "" {
		ns = "default"
	}
	cmd := exec.Command(w.Node, filepath.Join(w.Dir, "dist", "worker.js"))
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+w.Address, "TEMPORAL_NAMESPACE="+ns,
		"TASK_QUEUE="+queue, "SCENARIO="+w.Scenario)
	// Read only once the process has exited (Wait has copied it all).
	var logs bytes.Buffer
	cmd.Stderr = &logs
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the TypeScript worker: %w", err)
	}
	exited := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "polling ") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	stop := func() {
		// SIGTERM: the SDK's worker shuts down, finishing what it runs.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	select {
	case <-ready:
		return stop, nil
	case err := <-exited:
		return nil, fmt.Errorf("the TypeScript worker exited before polling (%v): %s", err, logs.String())
	case <-time.After(readyTimeout):
		stop()
		return nil, fmt.Errorf("the TypeScript worker did not poll within %v: %s", readyTimeout, logs.String())
	}
}

// Build compiles the worker with its packages' own TypeScript compiler
// (as `npm run build`, without npm). Its packages come from npm ci in Dir
// (scripts/lib.sh's ensure_ts_conformance).
func (w TypeScriptWorker) Build(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(w.Dir, "node_modules", "@temporalio", "worker")); err != nil {
		return fmt.Errorf("the TypeScript worker's packages are not installed: run `. scripts/lib.sh && ensure_ts_conformance` (npm ci in %s): %w", w.Dir, err)
	}
	cmd := exec.CommandContext(ctx, w.Node, filepath.Join("node_modules", "typescript", "bin", "tsc"), "-p", ".")
	cmd.Dir = w.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("tsc -p %s: %w: %s", w.Dir, err, out)
	}
	return nil
}
