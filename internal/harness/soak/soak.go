package soak

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/durable-agents/agentloop/internal/harness/fleettest"
	"github.com/durable-agents/agentloop/internal/harness/stack"
)

// Options shape a soak.
type Options struct {
	// Duration is how long the chaos lasts; the prompts are spread over it.
	Duration time.Duration
	// Sessions, Prompts and Workers: Sessions concurrent sessions of
	// Prompts prompts each, on Workers worker processes.
	Sessions, Prompts, Workers int
	// KillMin and KillMax bound the pause between two worker kills.
	KillMin, KillMax time.Duration
	// ServerRestarts restarts the Temporal server this many times, evenly
	// spread: the first with SIGTERM, the next with SIGKILL, alternating.
	ServerRestarts int
	// Drain is how long, after Duration, the last prompts may take.
	Drain time.Duration
	// ContinueAsNewAfterTurns is the sessions' setting (each prompt is two
	// turns), so that the event logs cross continue-as-new.
	ContinueAsNewAfterTurns int
	// ChunkDelay is the model's delay between streamed chunks.
	ChunkDelay time.Duration
	// HostLosses replaces a random worker this many times, evenly spread:
	// SIGKILL for good, and a new host with a new host id and an empty tool
	// journal in its place (a pod rescheduled). Runs whose tools were on
	// the lost host must move to a live one.
	HostLosses int
	// DriftWorkers are worker processes beside Workers that lack the
	// provider's environment (a pod started without its secret): the
	// stages they take must move to a worker that has it.
	DriftWorkers int
	// HostStartTimeout is the workers' -host-start-timeout: how long a tool
	// call waits on a lost host's queue before the model is told the host
	// is unavailable.
	HostStartTimeout time.Duration
	// WorkerArgs are extra flags for every worker (-sandbox=none where no
	// sandbox works).
	WorkerArgs []string
	// Dir keeps the stack, workspaces, journals and logs; a new temporary
	// directory when empty.
	Dir string
	// Logf reports progress; nil is silent.
	Logf func(format string, args ...any)
}

// Defaults are the soak: 3 workers and one without the provider's
// key, 100 sessions of 20 prompts, a worker killed every 5-15 s, the server
// restarted twice, a host lost for good twice.
func Defaults(d time.Duration) Options {
	return Options{Duration: d, Sessions: 100, Prompts: 20, Workers: 3, KillMin: 5 * time.Second, KillMax: 15 * time.Second,
		ServerRestarts: 2, HostLosses: 2, DriftWorkers: 1, HostStartTimeout: 30 * time.Second,
		Drain: 10 * time.Minute, ContinueAsNewAfterTurns: 8, ChunkDelay: 80 * time.Millisecond}
}

// processes is how many worker processes run at a time.
func (o Options) processes() int { return o.Workers + o.DriftWorkers }

// chaosEvent is one thing the driver did.
type chaosEvent struct {
	at   time.Duration
	what string
}

// soak is one run of it.
type soak struct {
	o       Options
	dir     string
	stk     *stack.Stack
	c       client.Client
	fleet   *fleet
	model   *fleettest.Model
	queue   string
	began   time.Time
	mu      sync.Mutex
	events  []chaosEvent
	kills   map[syscall.Signal]int
	servers int
	losses  int
	// setupTook is how long the stack, the worker build and the workers
	// took to start.
	setupTook time.Duration
}

func (s *soak) logf(format string, args ...any) {
	if s.o.Logf != nil {
		s.o.Logf("[%6.1fs] %s", time.Since(s.began).Seconds(), fmt.Sprintf(format, args...))
	}
}

func (s *soak) record(what string) {
	s.mu.Lock()
	s.events = append(s.events, chaosEvent{time.Since(s.began), what})
	s.mu.Unlock()
	s.logf("%s", what)
}

// Run runs a soak and checks its invariants. An error means the soak could
// not run; broken invariants are the report's violations.
func Run(ctx context.Context, o Options) (*Report, error) {
	s := &soak{o: o, began: time.Now(), kills: map[syscall.Signal]int{}, queue: fmt.Sprintf("soak-%d", time.Now().Unix())}
	var err error
	if s.dir = o.Dir; s.dir == "" {
		if s.dir, err = os.MkdirTemp("", "agentloop-soak-"); err != nil {
			return nil, err
		}
	}
	// 0755: PostgreSQL runs as its own user when this runs as root, and
	// must reach the stack's directory in it.
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chmod(s.dir, 0o755); err != nil {
		return nil, err
	}
	if err := s.setUp(ctx); err != nil {
		s.tearDown()
		return nil, err
	}
	defer s.tearDown()
	// The chaos and the prompts' schedule start now, set up or not.
	s.setupTook = time.Since(s.began)
	s.began = time.Now()

	drivers := make([]*sessionDriver, o.Sessions)
	var wg sync.WaitGroup
	chaosCtx, stopChaos := context.WithCancel(ctx)
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		s.chaos(chaosCtx)
	}()
	for i := range drivers {
		drivers[i] = s.newDriver(i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			drivers[i].run(ctx)
		}()
	}
	progressDone := make(chan struct{})
	go func() {
		for {
			select {
			case <-progressDone:
				return
			case <-time.After(30 * time.Second):
			}
			answered := 0
			for _, d := range drivers {
				d.mu.Lock()
				answered += len(d.latency)
				d.mu.Unlock()
			}
			s.logf("%d of %d prompts answered", answered, o.Sessions*o.Prompts)
		}
	}()
	wg.Wait()
	close(progressDone)
	stopChaos()
	<-chaosDone
	s.logf("all sessions done; checking")
	// Everything the workers were doing when the last kill came has been
	// settled: the sessions are idle. The checks read what they recorded.
	r := s.check(ctx, drivers)
	return r, nil
}

// setUp starts the stack, the model and the workers.
func (s *soak) setUp(ctx context.Context) error {
	ports, err := stack.FreePorts()
	if err != nil {
		return err
	}
	pgPort, err := stack.FreePorts()
	if err != nil {
		return err
	}
	t := time.Now()
	s.stk, err = stack.Up(ctx, stack.Options{Dir: filepath.Join(s.dir, "stack"), Ports: ports, PostgresPort: pgPort.Frontend})
	if err != nil {
		return err
	}
	s.logf("stack up in %v: PostgreSQL on %d, Temporal server (pid %d) on %s", time.Since(t).Round(time.Millisecond),
		s.stk.Postgres.Port, s.stk.Server.Pid(), s.stk.Server.Address)
	if s.c, err = s.stk.Server.Dial(); err != nil {
		return err
	}
	if s.model, err = startModel(s.o.ChunkDelay); err != nil {
		return err
	}
	bin, err := fleettest.BuildWorker(ctx, s.dir)
	if err != nil {
		return err
	}
	args := s.o.WorkerArgs
	if s.o.HostStartTimeout > 0 {
		args = append(slices.Clone(args), "-host-start-timeout", s.o.HostStartTimeout.String())
	}
	s.fleet = &fleet{bin: bin, address: s.stk.Server.Address, queue: s.queue, dir: s.dir,
		store: filepath.Join(s.dir, "store"), modelURL: s.model.URL, args: args, drift: s.o.DriftWorkers}
	for i := 0; i < s.o.processes(); i++ {
		if err := s.fleet.start(i); err != nil {
			return err
		}
	}
	s.logf("%d workers started on task queue %s, %d of them without the provider's environment", s.o.processes(), s.queue, s.o.DriftWorkers)
	return nil
}

func (s *soak) tearDown() {
	if s.fleet != nil {
		s.fleet.stopAll()
	}
	if s.model != nil {
		s.model.Close()
	}
	if s.c != nil {
		s.c.Close()
	}
	if s.stk != nil {
		_ = s.stk.Down()
	}
}

// chaos kills a random worker every KillMin-KillMax, with SIGKILL or
// SIGTERM at random, and starts it again; it restarts the server
// ServerRestarts times and replaces a host for good HostLosses times, each
// evenly spread over Duration (host losses half a step after).
func (s *soak) chaos(ctx context.Context) {
	end := s.began.Add(s.o.Duration)
	spread := func(n int, offset float64) []time.Time {
		var at []time.Time
		for i := 1; i <= n; i++ {
			at = append(at, s.began.Add(time.Duration((float64(i)-offset)*float64(s.o.Duration)/float64(n+1))))
		}
		return at
	}
	restarts, losses := spread(s.o.ServerRestarts, 0), spread(s.o.HostLosses, 0.5)
	nextKill := time.Now().Add(s.pause())
	for {
		next := nextKill
		for _, q := range [][]time.Time{restarts, losses} {
			if len(q) > 0 && q[0].Before(next) {
				next = q[0]
			}
		}
		if next.After(end) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
		switch {
		case len(restarts) > 0 && !restarts[0].After(time.Now()):
			restarts = restarts[1:]
			s.restartServer(ctx)
		case len(losses) > 0 && !losses[0].After(time.Now()):
			losses = losses[1:]
			s.loseHost()
		default:
			s.killWorker()
			nextKill = time.Now().Add(s.pause())
		}
	}
}

// loseHost replaces a random worker that has the provider by a new host,
// for good.
func (s *soak) loseHost() {
	i := s.o.DriftWorkers + rand.IntN(s.o.Workers)
	old, next, err := s.fleet.replace(i)
	s.mu.Lock()
	s.losses++
	s.mu.Unlock()
	if err != nil {
		s.record(fmt.Sprintf("host %s lost for good; its replacement %s did not start: %v", old, next, err))
		return
	}
	s.record(fmt.Sprintf("host %s (worker %d) lost for good (SIGKILL); a new host %s started in its place", old, i, next))
}

func (s *soak) pause() time.Duration {
	return s.o.KillMin + time.Duration(rand.Int64N(int64(s.o.KillMax-s.o.KillMin)+1))
}

// killWorker kills a random worker and starts it again.
func (s *soak) killWorker() {
	i := rand.IntN(s.o.processes())
	sig := syscall.SIGKILL
	if rand.IntN(2) == 0 {
		sig = syscall.SIGTERM
	}
	pid, took := s.fleet.stop(i, sig, 30*time.Second)
	s.mu.Lock()
	s.kills[sig]++
	s.mu.Unlock()
	if err := s.fleet.start(i); err != nil {
		s.record(fmt.Sprintf("worker %d did not start again: %v", i, err))
		return
	}
	s.record(fmt.Sprintf("%v worker %d (pid %d, gone in %v), started again", sig, i, pid, took.Round(time.Millisecond)))
}

// restartServer stops the Temporal server (SIGTERM the first time, SIGKILL
// the next, alternating), leaves it down for 3 s and starts it again.
func (s *soak) restartServer(ctx context.Context) {
	s.mu.Lock()
	s.servers++
	n := s.servers
	s.mu.Unlock()
	how, stop := "SIGTERM", s.stk.Server.Stop
	if n%2 == 0 {
		how, stop = "SIGKILL", s.stk.Server.Kill
	}
	t := time.Now()
	pid := s.stk.Server.Pid()
	if err := stop(); err != nil {
		s.record(fmt.Sprintf("server restart %d: stop: %v", n, err))
	}
	stopped := time.Since(t)
	time.Sleep(3 * time.Second)
	t2 := time.Now()
	if err := s.stk.Server.Start(ctx); err != nil {
		s.record(fmt.Sprintf("server restart %d: start: %v", n, err))
		return
	}
	s.record(fmt.Sprintf("server restart %d: %s to the Temporal server (pid %d, gone in %v), down %v, serving again %v after its start (pid %d)",
		n, how, pid, stopped.Round(time.Millisecond), time.Since(t).Round(time.Millisecond), time.Since(t2).Round(time.Millisecond), s.stk.Server.Pid()))
}
