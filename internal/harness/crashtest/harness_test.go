package crashtest_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durable-agents/agentloop/agent"
	"github.com/durable-agents/agentloop/agentapi"
	"github.com/durable-agents/agentloop/agentclient"
	"github.com/durable-agents/agentloop/internal/harness/devserver"
	"github.com/durable-agents/agentloop/internal/harness/stack"
	"github.com/durable-agents/agentloop/internal/harness/testenv"
	"github.com/durable-agents/agentloop/llm"
	"github.com/durable-agents/agentloop/store"
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

// proc is a worker process.
type proc struct {
	name string
	cmd  *exec.Cmd
	once sync.Once
	done chan struct{}
}

// startWorker starts a worker process and waits until it polls.
func (e *env) startWorker(name string, args ...string) *proc {
	e.t.Helper()
	args = append([]string{"-address", e.hostPort, "-queue", e.queue, "-dir", e.dir, "-v"}, args...)
	logf, err := os.Create(filepath.Join(e.dir, "worker-"+name+".log"))
	require.NoError(e.t, err)
	cmd := exec.Command(workerBin, args...)
	cmd.Stderr = logf
	stdout, err := cmd.StdoutPipe()
	require.NoError(e.t, err)
	require.NoError(e.t, cmd.Start())
	p := &proc{name: name, cmd: cmd, done: make(chan struct{})}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		signalled := false
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			if !signalled && strings.HasPrefix(sc.Text(), "ready") {
				close(ready)
				signalled = true
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(p.done)
	}()
	e.t.Cleanup(p.kill)
	select {
	case <-ready:
	case <-p.done:
		e.t.Fatalf("worker %s exited before it was ready", name)
	case <-time.After(reachTimeout):
		e.t.Fatalf("worker %s not ready after %v", name, reachTimeout)
	}
	e.logf("worker %s started (pid %d) %s", name, p.pid(), strings.Join(args[6:], " "))
	return p
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// wrote reports whether a tool log line ("start pid=N call=..." and the
// like) came from this worker.
func (p *proc) wrote(line string) bool { return strings.Contains(line, "pid="+itoa(p.pid())+" ") }

// kill sends SIGKILL and waits for the process to go.
func (p *proc) kill() {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	})
}

func (p *proc) alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// killWorker kills a worker and logs it.
func (e *env) killWorker(p *proc, why string) {
	e.t.Helper()
	p.kill()
	e.logf("SIGKILL worker %s (pid %d): %s", p.name, p.pid(), why)
}

// input is a run of a scripted model with the given tools in the env's
// workspace.
func (e *env) input(model string, toolNames ...string) agentapi.AgentLoopInput {
	return agentapi.AgentLoopInput{
		LoopConfig: agent.LoopConfig{
			Model:     agent.ModelRef{Provider: llm.ScriptedProviderName, ID: model},
			Tools:     toolNames,
			Workspace: e.ws,
		},
		Prompt: "go",
	}
}

func (e *env) start(id string, in agentapi.AgentLoopInput) client.WorkflowRun {
	e.t.Helper()
	run, err := e.c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID:        id,
		TaskQueue: e.queue,
	}, agentapi.AgentLoopWorkflow, in)
	require.NoError(e.t, err)
	e.logf("started run %s", id)
	// The tests read a turn's live heartbeat details as a watcher does, so
	// they hold the run's watch lease as one does: without it a worker
	// streams for liveness only (activities/stream.go).
	st, err := store.Open(filepath.Join(e.dir, "content"), store.Options{})
	require.NoError(e.t, err)
	require.NoError(e.t, st.MarkWatched(context.Background(), id, time.Now().Add(time.Hour)))
	return run
}

// result waits for a run's result through the env's current client.
func (e *env) result(id string, timeout time.Duration) agentapi.AgentLoopResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res agentapi.AgentLoopResult
	require.NoError(e.t, e.c.GetWorkflow(ctx, id, "").Get(ctx, &res), "run %s", id)
	e.logf("run %s ended: %s after %d turns", id, res.StopReason, res.Turns)
	return res
}

func (e *env) history(id string) *historypb.History {
	e.t.Helper()
	h, err := testenv.History(context.Background(), e.c, id, "")
	require.NoError(e.t, err)
	return h
}

// events reads the run's whole event log.
func (e *env) events(id string) []agent.Event {
	e.t.Helper()
	events, err := agentclient.Events(context.Background(), e.c, id, "")
	require.NoError(e.t, err)
	return events
}

// waitFor polls cond every 50ms until it holds.
func (e *env) waitFor(what string, timeout time.Duration, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.logf("%s", what)
}

// pendingActivity returns the run's pending activity of the given type.
func (e *env) pendingActivity(id, activityType string) (found bool, state enumspb.PendingActivityState, heartbeat *agentapi.LiveProgress) {
	d, err := e.c.DescribeWorkflow(context.Background(), id, "")
	if err != nil {
		return false, 0, nil
	}
	for _, pa := range d.RawResponse.GetPendingActivities() {
		if pa.GetActivityType().GetName() != activityType {
			continue
		}
		var p agentapi.LiveProgress
		if pa.GetHeartbeatDetails() != nil && converter.GetDefaultDataConverter().FromPayloads(pa.GetHeartbeatDetails(), &p) == nil {
			heartbeat = &p
		}
		return true, pa.GetState(), heartbeat
	}
	return false, 0, nil
}

func (e *env) path(name string) string { return filepath.Join(e.ws, name) }

// lines returns the lines of a file that start with prefix.
func lines(path, prefix string) []string {
	b, _ := os.ReadFile(path)
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l != "" && strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// oneResultPerCall checks the transcript: every tool call of an assistant
// message is answered by exactly one tool result, and no result answers a
// call that was not made. It returns the results by call id.
func oneResultPerCall(t *testing.T, msgs []agent.Message) map[string]agent.Message {
	t.Helper()
	calls := map[string]bool{}
	results := map[string]agent.Message{}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleAssistant:
			for _, c := range m.ToolCalls() {
				require.False(t, calls[c.ID], "tool call %s made twice", c.ID)
				calls[c.ID] = true
			}
		case agent.RoleToolResult:
			require.True(t, calls[m.ToolCallID], "result for unknown call %s", m.ToolCallID)
			_, dup := results[m.ToolCallID]
			require.False(t, dup, "call %s has two results", m.ToolCallID)
			results[m.ToolCallID] = m
		}
	}
	for id := range calls {
		_, ok := results[id]
		require.True(t, ok, "call %s has no result", id)
	}
	return results
}

// countEvents counts events of a type (for one tool call when id is set).
func countEvents(evs []agent.Event, typ agent.EventType, id string) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ && (id == "" || ev.ToolCallID == id) {
			n++
		}
	}
	return n
}

// attempt is what history says about one scheduled activity.
type attempt struct {
	Type     string
	ID       string
	Attempt  int32  // of the attempt that ended it
	Identity string // worker that ran that attempt
	// LastFailure is how the attempt before it failed.
	LastFailure string
	// Outcome is completed, failed, timed out (with the timeout type) or
	// pending.
	Outcome string
}

// scheduledActivities lists a history's activities in schedule order.
func scheduledActivities(h *historypb.History) []*attempt {
	var out []*attempt
	byID := map[int64]*attempt{}
	for _, ev := range h.GetEvents() {
		switch {
		case ev.GetActivityTaskScheduledEventAttributes() != nil:
			a := ev.GetActivityTaskScheduledEventAttributes()
			at := &attempt{Type: a.GetActivityType().GetName(), ID: a.GetActivityId(), Outcome: "pending"}
			byID[ev.GetEventId()] = at
			out = append(out, at)
		case ev.GetActivityTaskStartedEventAttributes() != nil:
			a := ev.GetActivityTaskStartedEventAttributes()
			at := byID[a.GetScheduledEventId()]
			at.Attempt, at.Identity = a.GetAttempt(), a.GetIdentity()
			if f := a.GetLastFailure(); f != nil {
				at.LastFailure = f.GetMessage()
				if ti := f.GetTimeoutFailureInfo(); ti != nil {
					at.LastFailure = "timeout " + ti.GetTimeoutType().String()
				}
			}
		case ev.GetActivityTaskCompletedEventAttributes() != nil:
			byID[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()].Outcome = "completed"
		case ev.GetActivityTaskFailedEventAttributes() != nil:
			a := ev.GetActivityTaskFailedEventAttributes()
			byID[a.GetScheduledEventId()].Outcome = "failed: " + a.GetFailure().GetMessage()
		case ev.GetActivityTaskTimedOutEventAttributes() != nil:
			a := ev.GetActivityTaskTimedOutEventAttributes()
			out := "timed out"
			if ti := a.GetFailure().GetTimeoutFailureInfo(); ti != nil {
				out += " " + ti.GetTimeoutType().String()
			}
			byID[a.GetScheduledEventId()].Outcome = out
		}
	}
	return out
}

func ofType(as []*attempt, typ string) []*attempt {
	var out []*attempt
	for _, a := range as {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

func (a *attempt) String() string {
	s := fmt.Sprintf("%s(id %s) attempt %d by %s: %s", a.Type, a.ID, a.Attempt, a.Identity, a.Outcome)
	if a.LastFailure != "" {
		s += "; previous attempt: " + a.LastFailure
	}
	return s
}

// logActivities logs the run's activities as history records them.
func (e *env) logActivities(id string) []*attempt {
	e.t.Helper()
	e.saveHistory(id)
	as := scheduledActivities(e.history(id))
	for _, a := range as {
		e.t.Logf("  history: %s", a)
	}
	return as
}

// saveHistory writes a run's history to $CRASHTEST_SAVE_HISTORY/<test>-<id>.json
// when that is set, for replaying it against changed workflow code.
func (e *env) saveHistory(id string) {
	e.t.Helper()
	dir := os.Getenv("CRASHTEST_SAVE_HISTORY")
	if dir == "" {
		return
	}
	// A subtest's name holds a slash; the file stays in dir.
	path := filepath.Join(dir, strings.ReplaceAll(e.t.Name()+"-"+id, "/", "-")+".json")
	require.NoError(e.t, testenv.SaveHistory(context.Background(), e.c, id, "", path))
	e.logf("saved history to %s", path)
}

// logHistory logs the events of every run of a workflow id (a parent
// continued as new has several) with their times, timers' durations and
// signals' payloads when CRASHTEST_HISTORY is set, for looking into a
// slow or failing test.
func (e *env) logHistory(id string) {
	e.t.Helper()
	if os.Getenv("CRASHTEST_HISTORY") == "" {
		return
	}
	var first time.Time
	for run, h := range e.chain(id) {
		e.t.Logf("  %s run %d", id, run+1)
		for _, ev := range h.GetEvents() {
			at := ev.GetEventTime().AsTime()
			if first.IsZero() {
				first = at
			}
			detail := ""
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				detail = a.GetActivityType().GetName()
			}
			if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil {
				detail = a.GetIdentity()
			}
			if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
				detail = a.GetCause().String()
			}
			if a := ev.GetWorkflowTaskTimedOutEventAttributes(); a != nil {
				detail = a.GetTimeoutType().String()
			}
			if a := ev.GetTimerStartedEventAttributes(); a != nil {
				detail = a.GetStartToFireTimeout().AsDuration().String()
			}
			if a := ev.GetWorkflowExecutionSignaledEventAttributes(); a != nil {
				detail = a.GetSignalName()
				if p := a.GetInput().GetPayloads(); len(p) > 0 {
					detail += " " + clip(string(p[0].GetData()), 300)
				}
			}
			e.t.Logf("  %s event %3d %6.2fs %s %s", id, ev.GetEventId(), at.Sub(first).Seconds(), ev.GetEventType(), detail)
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
