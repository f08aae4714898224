package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/durable-agents/agentloop/internal/harness/stack"
)

// serverFigures are bench loop's concurrency figures on one server.
type serverFigures struct {
	name         string
	floor, lone  time.Duration
	done, failed int
	wall         time.Duration
	durs         []time.Duration
	cpu          cpuSample     // the burst's, server worker client
	db           time.Duration // the burst's PostgreSQL CPU
	floorDurs    []time.Duration
	floorFailed  int
	floorWall    time.Duration
	floorCPU     cpuSample
	floorDB      time.Duration
	concurrent   int
}

// benchServers runs bench loop's concurrency section (lone runs of the
// 10x4/100ms parallel scenario, then that many at once on one worker
// process, then as many floor runs at once) on a dev server and on the
// self-hosted stack (internal/harness/stack: PostgreSQL and Temporal's server, as
// docker-compose.yml configures it), one after the other, and prints the
// figures side by side.
func benchServers(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("servers", flag.ExitOnError)
	concurrent := fs.Int("concurrent", 200, "runs started at once")
	lone := fs.Int("lone", 5, "lone runs, one after another, for the median a burst's runs are compared with")
	floorRuns := fs.Int("floor-runs", 20, "floor runs, one after another")
	_ = fs.Parse(args)
	all, err := loadScenarios()
	if err != nil {
		return err
	}
	s := find(all, scPar100)
	began := time.Now()
	fmt.Printf("command:  go run ./bench servers %s\n", strings.Join(args, " "))
	fmt.Printf("machine:  %s, %s, GOMAXPROCS %d; load %s at start\n", machine(), runtime.Version(), runtime.GOMAXPROCS(0), loadavg())

	var figs []serverFigures
	for _, target := range []string{"dev server", "stack"} {
		fmt.Fprintf(os.Stderr, "bench: %s\n", target)
		var stk *stack.Stack
		os.Unsetenv("TEMPORAL_ADDRESS")
		if target == "stack" {
			dir, err := os.MkdirTemp("", "bench-servers-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			// PostgreSQL runs as its own user when this runs as root.
			if err := os.Chmod(dir, 0o755); err != nil {
				return err
			}
			ports, err := stack.FreePorts()
			if err != nil {
				return err
			}
			pg, err := stack.FreePorts()
			if err != nil {
				return err
			}
			if stk, err = stack.Up(ctx, stack.Options{Dir: filepath.Join(dir, "stack"), Ports: ports, PostgresPort: pg.Frontend}); err != nil {
				return err
			}
			os.Setenv("TEMPORAL_ADDRESS", stk.Server.Address)
		}
		f, err := concurrencyFigures(ctx, s, stk, *concurrent, *lone, *floorRuns)
		if stk != nil {
			_ = stk.Down()
			os.Unsetenv("TEMPORAL_ADDRESS")
		}
		if err != nil {
			return fmt.Errorf("%s: %w", target, err)
		}
		f.name = target
		figs = append(figs, f)
	}
	printServers(figs)
	fmt.Printf("\nload %s at end; whole command %.0f s\n", loadavg(), time.Since(began).Seconds())
	return nil
}

// concurrencyFigures measures on the server setupWorker finds
// (TEMPORAL_ADDRESS when set, else a dev server of its own).
func concurrencyFigures(ctx context.Context, s benchScenario, stk *stack.Stack, n, lone, floorRuns int) (serverFigures, error) {
	f := serverFigures{concurrent: n}
	e, err := setupWorker(ctx, "loopworker", nil)
	if err != nil {
		return f, err
	}
	defer e.close()
	meter := cpuMeter{server: listenerPID(e.address), worker: e.worker.Process.Pid, client: os.Getpid()}
	db := func() time.Duration { return 0 }
	if stk != nil {
		db = func() time.Duration { return postgresCPU(stk.Postgres) }
	}
	for i := 0; i < 3; i++ {
		if _, err := runFloor(ctx, e, FloorInput{Activities: 1}, fmt.Sprintf("warmup-%d", i)); err != nil {
			return f, fmt.Errorf("warm-up floor run: %w", err)
		}
	}
	if _, _, err := runOurs(ctx, e, s, "warmup"); err != nil {
		return f, fmt.Errorf("warm-up run: %w", err)
	}
	var floors, lones []time.Duration
	for i := 0; i < floorRuns; i++ {
		d, err := runFloor(ctx, e, FloorInput{Activities: 1}, fmt.Sprintf("floor-%d", i))
		if err != nil {
			return f, err
		}
		floors = append(floors, d)
	}
	for i := 0; i < lone; i++ {
		d, _, err := runOurs(ctx, e, s, fmt.Sprintf("lone-%d", i))
		if err != nil {
			return f, err
		}
		lones = append(lones, d)
	}
	f.floor, f.lone = median(floors), median(lones)

	c0, d0 := meter.sample(), db()
	f.durs, f.failed, f.wall = runConcurrent(ctx, e, s, n)
	f.cpu, f.db = meter.sample().sub(c0), db()-d0
	f.done = len(f.durs)
	c0, d0 = meter.sample(), db()
	f.floorDurs, f.floorFailed, f.floorWall = runConcurrentFloor(ctx, e, n)
	f.floorCPU, f.floorDB = meter.sample().sub(c0), db()-d0
	return f, nil
}

// postgresCPU is the CPU time of PostgreSQL's postmaster and its children
// (a backend per connection, and the background writers).
func postgresCPU(pg *stack.Postgres) time.Duration {
	b, err := os.ReadFile(filepath.Join(pg.Dir, "postgres.pid"))
	if err != nil {
		return 0
	}
	root, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	total, _ := procCPU(root)
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(root) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
			d, _ := procCPU(pid)
			total += d
		}
	}
	return total
}

func printServers(figs []serverFigures) {
	row := func(name string, cell func(f serverFigures) string) {
		fmt.Printf("  %-44s", name)
		for _, f := range figs {
			fmt.Printf(" %-34s", cell(f))
		}
		fmt.Println()
	}
	fmt.Println()
	row("", func(f serverFigures) string { return f.name })
	row("server", func(f serverFigures) string {
		if f.name == "stack" {
			return "Temporal 1.29.1, PostgreSQL, 4 shards"
		}
		return "temporal server start-dev, SQLite, 1 shard"
	})
	row("floor: one no-op activity, median", func(f serverFigures) string { return fmt.Sprintf("%.1f ms", ms(f.floor)) })
	row("lone 10x4/100ms parallel run, median", func(f serverFigures) string { return fmt.Sprintf("%.0f ms", ms(f.lone)) })
	row(fmt.Sprintf("%d at once: completed", figs[0].concurrent), func(f serverFigures) string {
		return fmt.Sprintf("%d/%d (%d failed)", f.done, f.concurrent, f.failed)
	})
	row("  wall time, runs per minute", func(f serverFigures) string {
		return fmt.Sprintf("%.1f s, %.0f/min", f.wall.Seconds(), float64(f.done)/f.wall.Minutes())
	})
	row("  run time p50 / p99 / max", func(f serverFigures) string {
		return fmt.Sprintf("%.1f / %.1f / %.1f s", quantile(f.durs, 0.5).Seconds(), quantile(f.durs, 0.99).Seconds(), quantile(f.durs, 1).Seconds())
	})
	row("  p99 / lone", func(f serverFigures) string {
		return fmt.Sprintf("%.1fx", float64(quantile(f.durs, 0.99))/float64(f.lone))
	})
	row("  CPU per run: server (+ PostgreSQL)", func(f serverFigures) string {
		return fmt.Sprintf("%.0f ms (+ %.0f ms)", ms(f.cpu.server)/float64(f.concurrent), ms(f.db)/float64(f.concurrent))
	})
	row("  CPU per run: worker, client", func(f serverFigures) string {
		return fmt.Sprintf("%.0f ms, %.0f ms", ms(f.cpu.worker)/float64(f.concurrent), ms(f.cpu.client)/float64(f.concurrent))
	})
	row(fmt.Sprintf("%d floor runs at once: p50 / p99", figs[0].concurrent), func(f serverFigures) string {
		return fmt.Sprintf("%.0f / %.0f ms (%d failed)", ms(quantile(f.floorDurs, 0.5)), ms(quantile(f.floorDurs, 0.99)), f.floorFailed)
	})
	row("  CPU per floor run: server (+ PostgreSQL)", func(f serverFigures) string {
		return fmt.Sprintf("%.0f ms (+ %.0f ms)", ms(f.floorCPU.server)/float64(f.concurrent), ms(f.floorDB)/float64(f.concurrent))
	})
}
