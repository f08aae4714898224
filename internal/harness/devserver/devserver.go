package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/workflows"

	"github.com/durable-agents/agentloop/internal/gobin"
)

// CLIModule is the Temporal CLI the project builds: the newest that
// installs from the module proxy (server 1.29.1, UI 2.42.1).
const CLIModule = "github.com/temporalio/cli/cmd/temporal@v1.5.1"

// CLIDir is the directory under the go install directory where
// scripts/lib.sh builds CLIModule with a newer SQLite driver: the CLI's own
// pin can leave its dev server answering every request with "interrupted
// (9)" after a cancelled query (scripts/lib.sh says why).
const CLIDir = "temporal-cli-1.5.1-sqlite-1.62.0"

// FindCLI returns the path of the temporal binary: $TEMPORAL_CLI, then the
// project's build (CLIDir), then PATH, then the go install directory.
func FindCLI() (string, error) {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p, nil
	}
	for _, dir := range gobin.Dirs() {
		if p := filepath.Join(dir, CLIDir, "temporal"); isFile(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	for _, dir := range gobin.Dirs() {
		if p := filepath.Join(dir, "temporal"); isFile(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("temporal CLI not found; scripts/test or scripts/demo builds it (or set TEMPORAL_CLI)")
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Options configure a dev server.
type Options struct {
	// DBFile keeps state across restarts; empty means in memory.
	DBFile string
	// UI enables the Web UI on UIPort (a free port when empty).
	UI     bool
	UIPort string
	// HostPort binds the frontend; empty picks a free port.
	HostPort string
	// Log receives the server's output; nil discards it.
	Log io.Writer
	// Metrics serves the server's Prometheus metrics on a free loopback
	// port (Server.Requests reads them); without it the CLI still serves
	// them, on a port nobody knows.
	Metrics bool
	// ExtraArgs are added to ServerArgs.
	ExtraArgs []string
}

// Server is a running dev server and a client for it.
type Server struct {
	*testsuite.DevServer
	// MetricsURL is where the server serves its metrics, with
	// Options.Metrics.
	MetricsURL string
}

// Start starts a dev server with the project's search attributes.
func Start(ctx context.Context, o Options) (*Server, error) {
	path, err := FindCLI()
	if err != nil {
		return nil, err
	}
	out := o.Log
	if out == nil {
		out = io.Discard
		if f, err := logFile(); err != nil {
			return nil, err
		} else if f != nil {
			defer f.Close() // the server process holds its own descriptor
			out = f
		}
	}
	args := append(ServerArgs(), o.ExtraArgs...)
	var metricsURL string
	if o.Metrics {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		args = append(args, "--metrics-port", strconv.Itoa(port))
		metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	}
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{
		ExistingPath: path,
		ClientOptions: &client.Options{
			HostPort: o.HostPort,
			Logger:   log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))),
			// Tests run workers on this client.
			ConnectionOptions: client.ConnectionOptions{DialOptions: workflows.WorkerDialOptions()},
		},
		DBFilename: o.DBFile,
		EnableUI:   o.UI,
		UIPort:     o.UIPort,
		LogLevel:   "error",
		ExtraArgs:  args,
		Stdout:     out,
		Stderr:     out,
	})
	if err != nil {
		return nil, fmt.Errorf("start temporal dev server (%s): %w", path, err)
	}
	if err := namespaceReady(ctx, srv.Client()); err != nil {
		_ = srv.Stop()
		return nil, fmt.Errorf("temporal dev server (%s): %w", path, err)
	}
	return &Server{DevServer: srv, MetricsURL: metricsURL}, nil
}

// Stop closes the server's client, which the SDK's DevServer.Stop leaves
// open (its gRPC goroutines then keep reconnecting to a server that is
// gone: goleak found them), and stops the server.
func (s *Server) Stop() error {
	s.Client().Close()
	return s.DevServer.Stop()
}

// LogDirEnv names a directory where every dev server without Options.Log
// writes its output, one file each: what a failed CI run needs to tell a
// server that stalled or lost its state from a test that failed.
const LogDirEnv = "AGENTLOOP_DEVSERVER_LOGS"

func logFile() (*os.File, error) {
	dir := os.Getenv(LogDirEnv)
	if dir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.CreateTemp(dir, "devserver-*.log")
}

// namespaceReady waits until the frontend knows the default namespace. The
// server answers its health check before its namespace registry has
// loaded the namespace it created; on a loaded machine every request of
// the first seconds then failed with "Namespace default is not found"
// (33 workflows tests at once, seen under load 10).
func namespaceReady(ctx context.Context, c client.Client) error {
	for {
		_, err := c.DescribeTaskQueue(ctx, "devserver-ready", enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		var notFound *serviceerror.NamespaceNotFound
		if !errors.As(err, &notFound) {
			return nil // ready, or an error that is not about the namespace
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the default namespace is not ready: %w", err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ServerArgs are the extra `temporal server start-dev` arguments of every
// dev server of the project (scripts/server-args prints the same for the
// demo): the agent search attributes, and what the dev server leaves off by
// default that the agent loop measurably gains from.
func ServerArgs() []string {
	args := []string{
		"--dynamic-config-value", "system.enableActivityEagerExecution=true",
		// The dev server's single history shard reads its transfer queue at
		// most 20 times a second, so every workflow task not handed out
		// eagerly waited 15-50 ms for it (measured by bench loop).
		"--dynamic-config-value", "history.transferProcessorMaxPollRPS=10000",
	}
	for _, n := range slices.Sorted(maps.Keys(agentapi.SearchAttributes)) {
		args = append(args, "--search-attribute", n+"="+agentapi.SearchAttributes[n])
	}
	return args
}
