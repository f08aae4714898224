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
	"go.temporal.io/sdk/testsuite"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
)

// env is a Temporal server and a worker process for one benchmark.
type env struct {
	c       client.Client
	address string
	srv     *devserver.Server
	worker  *exec.Cmd
	queue   string
}

func quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// setup connects to TEMPORAL_ADDRESS or starts a dev server, then starts a
// worker process on a fresh task queue.
func setup(ctx context.Context, workerArgs ...string) (*env, error) {
	return setupWorker(ctx, "worker", nil, workerArgs...)
}

// setupWorker is setup with the worker process started as this binary's
// subcommand sub. serverArgs, when given, are added to the arguments of the
// dev server it starts (they must be empty with TEMPORAL_ADDRESS).
func setupWorker(ctx context.Context, sub string, serverArgs []string, workerArgs ...string) (*env, error) {
	e := &env{queue: fmt.Sprintf("bench-%d", time.Now().UnixNano())}
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		if len(serverArgs) > 0 {
			return nil, fmt.Errorf("server arguments %v need a dev server of the benchmark's own: unset TEMPORAL_ADDRESS", serverArgs)
		}
		c, err := client.Dial(client.Options{HostPort: addr, Logger: quiet()})
		if err != nil {
			return nil, err
		}
		e.c, e.address = c, addr
	} else {
		srv, err := startDevServer(ctx, serverArgs)
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

// startDevServer is devserver.Start with extra server arguments.
func startDevServer(ctx context.Context, extra []string) (*devserver.Server, error) {
	if len(extra) == 0 {
		return devserver.Start(ctx, devserver.Options{})
	}
	path, err := devserver.FindCLI()
	if err != nil {
		return nil, err
	}
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath:  path,
		ClientOptions: &client.Options{Logger: quiet()},
		LogLevel:      "error",
		ExtraArgs:     append(devserver.ServerArgs(), extra...),
		Stdout:        io.Discard,
		Stderr:        io.Discard,
	})
	if err != nil {
		return nil, fmt.Errorf("start temporal dev server (%s): %w", path, err)
	}
	return &devserver.Server{DevServer: srv}, nil
}
