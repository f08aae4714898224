package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"github.com/durable-agents/agentloop/internal/devserver"
)

// env is a Temporal server and a worker process for one benchmark.
type env struct {
	c        client.Client
	address  string
	srv      *devserver.Server
	worker   *exec.Cmd
	queue    string
	stopOnce bool
}

func quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// setup connects to TEMPORAL_ADDRESS or starts a dev server, then starts a
// worker process on a fresh task queue.
func setup(ctx context.Context, workerArgs ...string) (*env, error) {
	return setupWorker(ctx, "worker", workerArgs...)
}

// setupWorker is setup with the worker process started as this binary's
// subcommand sub.
func setupWorker(ctx context.Context, sub string, workerArgs ...string) (*env, error) {
	e := &env{queue: fmt.Sprintf("bench-%d", time.Now().UnixNano())}
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet()})
		if err != nil {
			return nil, err
		}
		e.c, e.address = c, addr
	} else {
		srv, err := devserver.Start(ctx, devserver.Options{})
		if err != nil {
			return nil, err
		}
		e.srv, e.c, e.address = srv, srv.Client(), srv.FrontendHostPort()
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := append([]string{sub, "-address", e.address, "-queue", e.queue}, workerArgs...)
	e.worker = exec.Command(self, args...)
	e.worker.Stdout, e.worker.Stderr = os.Stderr, os.Stderr
	if err := e.worker.Start(); err != nil {
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	if e.worker != nil && e.worker.Process != nil {
		_ = e.worker.Process.Kill()
		_ = e.worker.Wait()
	}
	if e.srv != nil {
		_ = e.srv.Stop()
	} else {
		e.c.Close()
	}
}

func machine() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	model := "unknown CPU"
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "model name") {
			model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
			break
		}
	}
	n := strings.Count(string(b), "processor\t:")
	return fmt.Sprintf("%s, %d cores", model, n)
}
