package crashtest_test

import (
	"context"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/stack"
)

// env is one test's dev server (on a SQLite file, restartable on the same
// port), task queue, state directory and workspace.
type env struct {
	t        *testing.T
	began    time.Time
	dir      string // worker state: hook markers, journal, audit log, logs
	ws       string // the runs' workspace
	db       string
	hostPort string
	queue    string
	srv      *devserver.Server
	stk      *stack.Server // instead of srv on the stack
	c        client.Client
	serverN  int
}

const notes = "the notes file\n"

func newEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("crash tests wait for Temporal timeouts; skipped in -short")
	}
	t.Parallel()
	e := &env{t: t, began: time.Now(), dir: t.TempDir(), ws: t.TempDir(), queue: "crash-" + strings.ToLower(t.Name())}
	e.db = filepath.Join(e.dir, "temporal.db")
	e.hostPort = freeHostPort(t)
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte(notes), 0o644))
	e.startServer()
	t.Cleanup(func() {
		e.stopServer()
		if t.Failed() || os.Getenv("CRASHTEST_LOGS") != "" {
			e.dumpLogs()
		}
		t.Logf("%s took %v", t.Name(), time.Since(e.began).Round(100*time.Millisecond))
	})
	return e
}

// freeHostPort picks a free port below the kernel's ephemeral range
// (32768-60999 on Linux): a server restarted on it must find it free
// again, and a port the kernel hands out at random (other packages' dev
// servers take four such ports each for their internal services) could be
// taken while the server is down.
func freeHostPort(t *testing.T) string {
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+mrand.IntN(12000))
		if l, err := net.Listen("tcp", addr); err == nil {
			l.Close()
			return addr
		}
	}
	t.Fatal("no free port between 20000 and 32000")
	return ""
}

// startServer starts the dev server on the env's SQLite file and port.
func (e *env) startServer() {
	e.t.Helper()
	e.serverN++
	if onStack != nil {
		e.startStackServer()
		return
	}
	logf, err := os.Create(filepath.Join(e.dir, fmt.Sprintf("server-%d.log", e.serverN)))
	require.NoError(e.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	srv, err := devserver.Start(ctx, devserver.Options{DBFile: e.db, HostPort: e.hostPort, Log: logf})
	if err != nil {
		b, _ := os.ReadFile(logf.Name())
		e.t.Fatalf("dev server %d on %s: %v\n%s", e.serverN, e.hostPort, err, b)
	}
	e.srv, e.c = srv, srv.Client()
	e.logf("dev server %d up on %s in %v", e.serverN, e.hostPort, time.Since(start).Round(time.Millisecond))
}

// startStackServer starts the test's Temporal server on the stack: the
// first time on new databases, then again on the same ones and ports.
func (e *env) startStackServer() {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	if e.stk == nil {
		ports, err := stack.FreePorts()
		require.NoError(e.t, err)
		onStack.mu.Lock()
		onStack.servers++
		n := onStack.servers
		onStack.mu.Unlock()
		e.stk, err = stack.StartServer(ctx, onStack.bins, onStack.compose, stack.ServerOptions{
			Dir: filepath.Join(e.dir, "stack-server"), Ports: ports, Postgres: onStack.pg,
			Database: fmt.Sprintf("crash%d", n), Visibility: fmt.Sprintf("crash%d_visibility", n),
		})
		require.NoError(e.t, err)
		e.hostPort = e.stk.Address
	} else {
		require.NoError(e.t, e.stk.Start(ctx))
	}
	c, err := e.stk.Dial()
	require.NoError(e.t, err)
	e.c = c
	e.logf("Temporal server %d (pid %d) up on %s in %v", e.serverN, e.stk.Pid(), e.hostPort, time.Since(start).Round(time.Millisecond))
}

// stopServer stops the dev server (SIGINT, then waits for it to exit), or
// on the stack the test's Temporal server (SIGTERM).
func (e *env) stopServer() {
	if e.stk != nil && e.c != nil {
		e.c.Close()
		e.c = nil
		require.NoError(e.t, e.stk.Stop())
		return
	}
	if e.srv == nil {
		return
	}
	e.c.Close()
	_ = e.srv.Stop()
	e.srv, e.c = nil, nil
}

// logf logs with the time since the test began.
func (e *env) logf(format string, args ...any) {
	e.t.Helper()
	e.t.Logf("[%5.1fs] %s", time.Since(e.began).Seconds(), fmt.Sprintf(format, args...))
}

func (e *env) dumpLogs() {
	entries, _ := os.ReadDir(e.dir)
	for _, en := range entries {
		if filepath.Ext(en.Name()) != ".log" || strings.HasPrefix(en.Name(), "server-") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(e.dir, en.Name()))
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		e.t.Logf("---- %s ----\n%s", en.Name(), b)
	}
}
