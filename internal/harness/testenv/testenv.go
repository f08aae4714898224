package testenv

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.uber.org/goleak"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/workflows"
)

var (
	once   sync.Once
	shared client.Client
	srv    *devserver.Server
	err    error
)

// Client returns a client for the test server, starting it on first use.
// A test binary that uses it should call Stop from TestMain.
func Client(t testing.TB) client.Client {
	t.Helper()
	once.Do(func() { shared, err = connect() })
	if err != nil {
		t.Fatalf("temporal server: %v", err)
	}
	return shared
}

func connect() (client.Client, error) {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		return client.Dial(client.Options{HostPort: addr, Logger: Logger(),
			ConnectionOptions: client.ConnectionOptions{DialOptions: workflows.WorkerDialOptions()}})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := devserver.Start(ctx, devserver.Options{})
	if err != nil {
		return nil, err
	}
	srv = s
	return s.Client(), nil
}

// Main runs a package's tests and stops the dev server afterwards.
func Main(m *testing.M) { os.Exit(run(m, false)) }

// MainCheckingLeaks is Main, and fails the package if its tests left
// goroutines behind once its workers, servers and client are gone: a
// heartbeat, a sender or a stream that outlived its call. ignore names
// goroutines that are not the package's to end (goleak.IgnoreAnyFunction
// of a library's own), each with its reason where it is passed.
func MainCheckingLeaks(m *testing.M, ignore ...goleak.Option) { os.Exit(run(m, true, ignore...)) }

func run(m *testing.M, leaks bool, ignore ...goleak.Option) int {
	code := m.Run()
	removeStore()
	if srv != nil {
		if err := srv.Stop(); err != nil { // closes shared, its client
			fmt.Fprintln(os.Stderr, "stop dev server:", err)
		}
	} else if shared != nil {
		shared.Close()
	}
	if code == 0 && leaks {
		if err := goleak.Find(ignore...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left behind by the tests:", err)
			return 1
		}
	}
	return code
}

// Logger is an SDK logger that prints warnings and errors only.
func Logger() log.Logger {
	return devserver.WarnLogger()
}

// Quiet is an SDK logger that prints nothing.
func Quiet() log.Logger {
	return log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// History fetches a run's whole history.
func History(ctx context.Context, c client.Client, workflowID, runID string) (*historypb.History, error) {
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, e)
	}
	return h, nil
}

// SaveHistory writes a run's history as the JSON the Temporal CLI prints and
// worker.WorkflowReplayer reads.
func SaveHistory(ctx context.Context, c client.Client, workflowID, runID, path string) error {
	h, err := History(ctx, c, workflowID, runID)
	if err != nil {
		return err
	}
	b, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// HostPort is the frontend address of the server Client connects to, for
// tools the tests run (the Temporal CLI); "" before Client.
func HostPort() string {
	if addr := os.Getenv("TEMPORAL_ADDRESS"); addr != "" {
		return addr
	}
	if srv != nil {
		return srv.FrontendHostPort()
	}
	return ""
}
