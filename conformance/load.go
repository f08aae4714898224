package conformance

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/client"
)

// burnEnv, set in a child's environment, makes BurnIfAsked spin.
const burnEnv = "AGENTLOOP_CONFORMANCE_BURN"

// BurnIfAsked turns this process into a CPU burner when StartBurners
// started it: it spins on one thread until its standard input closes (its
// parent ended, however it ended), then exits. Mains and TestMains that
// start burners call it first.
func BurnIfAsked() {
	if os.Getenv(burnEnv) == "" {
		return
	}
	runtime.GOMAXPROCS(1)
	var stop atomic.Bool
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop.Store(true)
	}()
	for n := uint64(0); !stop.Load(); n++ {
		if n%(1<<20) == 0 {
			runtime.Gosched() // lets the stdin reader run on the one thread
		}
	}
	os.Exit(0)
}

// StartBurners starts n copies of this program, each keeping one core
// busy, and returns the function that stops them. The program must call
// BurnIfAsked at its start.
func StartBurners(n int) (stop func(), err error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var cmds []*exec.Cmd
	var pipes []io.Closer
	stop = func() {
		for _, p := range pipes {
			_ = p.Close()
		}
		for _, c := range cmds {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	for i := 0; i < n; i++ {
		c := exec.Command(self, "-test.run=^$")
		c.Env = append(os.Environ(), burnEnv+"=1")
		in, err := c.StdinPipe()
		if err != nil {
			stop()
			return nil, err
		}
		if err := c.Start(); err != nil {
			stop()
			return nil, fmt.Errorf("start burner: %w", err)
		}
		cmds, pipes = append(cmds, c), append(pipes, in)
	}
	return stop, nil
}

// Burners keeps the machine's load at a target with CPU burners: every
// few seconds it runs as many as the target less the load others make
// (the 1-minute load average without its own), so a machine that is
// already busy gets fewer.
type Burners struct {
	target int
	mu     sync.Mutex
	stops  []func()
	done   chan struct{}
	wg     sync.WaitGroup
}

// KeepLoad starts keeping the load at target burners' worth.
func KeepLoad(target int) *Burners {
	b := &Burners{target: target, done: make(chan struct{})}
	b.adjust()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-b.done:
				return
			case <-t.C:
				b.adjust()
			}
		}
	}()
	return b
}

func (b *Burners) adjust() {
	b.mu.Lock()
	defer b.mu.Unlock()
	others := LoadAverage() - float64(len(b.stops))
	want := min(max(b.target-int(others+0.5), 0), b.target)
	for len(b.stops) < want {
		stop, err := StartBurners(1)
		if err != nil {
			return
		}
		b.stops = append(b.stops, stop)
	}
	for len(b.stops) > want {
		b.stops[len(b.stops)-1]()
		b.stops = b.stops[:len(b.stops)-1]
	}
}

// Running is how many burners run now.
func (b *Burners) Running() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.stops)
}

// Stop stops every burner.
func (b *Burners) Stop() {
	close(b.done)
	b.wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, stop := range b.stops {
		stop()
	}
	b.stops = nil
}

// LoadAverage is the machine's 1-minute load average (Linux), or 0.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(string(b), &l)
	return l
}

// Outcome is one run of a case under load.
type Outcome struct {
	Case       string
	Repetition int
	// Diff is the first difference from pi's trace; Err a run that failed.
	Diff       string
	Err        error
	WorkflowID string
	// Retries counts earlier attempts the server failed; RetriedFor is the
	// error of the last of them.
	Retries    int
	RetriedFor error
	// Took is how long the last attempt ran: a parallel batch that runs
	// past the run's eventOrderWindow (1 m here) may release an end before
	// a sibling's that pi emits first, so a slow run explains such a diff.
	Took time.Duration
}

// Failed reports whether the run differed from pi or failed.
func (o Outcome) Failed() bool { return o.Diff != "" || o.Err != nil }

// RunRepeated runs every case reps times, at most parallel runs at once,
// in the order repetition by repetition, and calls report for each run as
// it ends (from one goroutine at a time). Cases in KnownDifferences are
// left out.
func RunRepeated(ctx context.Context, c client.Client, cases []Case, reps, parallel int, report func(Outcome)) {
	type job struct {
		c   Case
		rep int
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < max(parallel, 1); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				o := runOne(ctx, c, j.c)
				o.Repetition = j.rep
				mu.Lock()
				report(o)
				mu.Unlock()
			}
		}()
	}
	for rep := 1; rep <= reps; rep++ {
		for _, cs := range cases {
			if _, known := KnownDifferences[cs.Name]; known {
				continue
			}
			select {
			case jobs <- job{cs, rep}:
			case <-ctx.Done():
			}
		}
	}
	close(jobs)
	wg.Wait()
}

// runOne runs a case, again when the server failed it (an RPC timing out
// on an overloaded machine is not a difference from pi); Retries counts
// those.
func runOne(ctx context.Context, c client.Client, cs Case) Outcome {
	var o Outcome
	var last error
	for try := 0; try < 3; try++ {
		if try > 0 {
			last = o.Err
			// The dev server at load 30 answered "Namespace default is
			// not found" for a while, then served the namespace again.
			select {
			case <-time.After(time.Duration(try) * 15 * time.Second):
			case <-ctx.Done():
			}
		}
		o = runOnce(ctx, c, cs)
		o.Retries, o.RetriedFor = try, last
		if o.Err == nil || ctx.Err() != nil {
			break
		}
	}
	return o
}

func runOnce(ctx context.Context, c client.Client, cs Case) Outcome {
	o := Outcome{Case: cs.Name}
	if ctx.Err() != nil {
		o.Err = ctx.Err()
		return o
	}
	rctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	began := time.Now()
	res, err := Run(rctx, c, cs.Scenario)
	o.Took = time.Since(began)
	o.WorkflowID = res.WorkflowID
	if err != nil {
		o.Err = err
		return o
	}
	got, err := Canonical(res.Trace)
	if err != nil {
		o.Err = err
		return o
	}
	o.Diff = Diff(cs.Want, got)
	return o
}
